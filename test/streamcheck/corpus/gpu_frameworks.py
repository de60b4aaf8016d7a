"""streamcheck's Python corpus: real bug shapes of torch, CuPy and tvm-ffi programs, each with its fix, and
correct programs that order work on other streams (a library's, NCCL's, cuDNN's, XLA's), run by corpus.py
under `python -m streamlike.check`. The line of each bug ends in `# the bug`, which corpus.py finds
to check the report's file:line. A bug variant catches the error CUDA answers its bug with (the
report came before it) and says it on stderr; a fixed variant lets every error through and checks
that its work was done (a capture replayed, a result read back). A correct program prints the result
it read back (`gpu_frameworks.py: SHAPE: result ...`), which corpus.py compares with the one expected.

usage: gpu_frameworks.py SHAPE bug|fixed     a bug shape
       gpu_frameworks.py SHAPE correct       a correct program
exits 77 without torch, CuPy, tvm-ffi, NCCL, cuDNN or JAX's GPU backend where the shape needs it (or,
for the shapes that use it, the streamlike package) or a CUDA device"""

import ctypes
import os
import sys
import tempfile

SKIP = 77
N = 1024  # the elements of each shape's data


def need(module):
    try:
        return __import__(module)
    except ImportError as e:
        print(f"gpu_frameworks.py: {module} not importable ({e}); skipped")
        sys.exit(SKIP)


def cupy_op_inside_torch_stream(bug):
    # CuPy inside torch.cuda.stream(s) runs on CuPy's own current stream (the sglang shape).
    torch, cupy = need("torch"), need("cupy")
    x = cupy.arange(1024, dtype=cupy.float32)
    s = torch.cuda.Stream()
    if bug:
        with torch.cuda.stream(s):
            y = x * 2  # the bug
    else:
        streamlike = need("streamlike")
        with streamlike.use(s):  # torch, CuPy and streamlike all on s
            y = x * 2
    torch.cuda.synchronize()
    return y


EXTENSION_SOURCE = r"""
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

__global__ void scale(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2;
}

// The flash-attention shape: a launch that ignores torch's current stream.
void scale_on_stream_zero(torch::Tensor x) {
  scale<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), static_cast<int>(x.numel()));
}

void scale_on_current_stream(torch::Tensor x) {
  scale<<<(x.numel() + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(),
                                                                             static_cast<int>(x.numel()));
}

// A C library handed a stream (a raw handle): it launches there, and ordering it is its caller's part.
void scale_on_stream(torch::Tensor x, int64_t stream) {
  scale<<<(x.numel() + 255) / 256, 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x.data_ptr<float>(),
                                                                                   static_cast<int>(x.numel()));
}
"""
EXTENSION_FUNCTIONS = ["scale_on_stream_zero", "scale_on_current_stream", "scale_on_stream"]


def corpus_extension(torch):
    """EXTENSION_SOURCE built by torch's extension builder (once: it caches the build)."""
    from torch.utils import cpp_extension

    try:
        return cpp_extension.load_inline(
            name="streamcheck_corpus_extension",
            cpp_sources="void scale_on_stream_zero(torch::Tensor x);\nvoid scale_on_current_stream(torch::Tensor x);\n"
            "void scale_on_stream(torch::Tensor x, int64_t stream);",
            cuda_sources=EXTENSION_SOURCE,
            functions=EXTENSION_FUNCTIONS,
        )
    except Exception as e:  # no nvcc or ninja for torch's extension builder
        print(f"gpu_frameworks.py: cannot build a torch extension ({e}); skipped")
        sys.exit(SKIP)


def torch_extension_on_stream_zero(bug):
    torch = need("torch")
    ext = corpus_extension(torch)
    x = torch.ones(1024, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        if bug:
            ext.scale_on_stream_zero(x)  # the bug
        else:
            ext.scale_on_current_stream(x)
    torch.cuda.synchronize()


TVM_FFI_SOURCE = r"""
__global__ void scale(float* x, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) x[i] *= 2;
}

// A tvm-ffi kernel launches on tvm-ffi's environment stream for the tensor's device, as tvm-ffi
// asks its kernels to: whoever calls it sets that stream.
void scale_on_env_stream(tvm::ffi::TensorView x) {
  const DLDevice device = x.device();
  const auto stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(device.device_type, device.device_id));
  scale<<<static_cast<unsigned>((x.numel() + 255) / 256), 256, 0, stream>>>(static_cast<float*>(x.data_ptr()),
                                                                           x.numel());
}
"""


def tvm_ffi_env_stream_not_following_torch(bug):
    # tvm-ffi sets its environment stream from torch's current stream only for the length of a
    # call that is handed a torch tensor; a caller holding tvm-ffi tensors (converted once, as a
    # library that keeps them does) calls with nothing set, and the kernel launches on the default
    # stream inside torch.cuda.stream(s).
    torch, tvm_ffi = need("torch"), need("tvm_ffi")
    from tvm_ffi import cpp as tvm_ffi_cpp

    # Built with nvcc and ninja, which built the corpus's own programs: a failure here is one.
    ext = tvm_ffi_cpp.load_inline(
        name="streamcheck_corpus_tvm_ffi", cuda_sources=TVM_FFI_SOURCE, functions=["scale_on_env_stream"]
    )
    x = torch.ones(1024, device="cuda")
    x_ffi = tvm_ffi.from_dlpack(x)
    dev = tvm_ffi.device("cuda", x.device.index or 0)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    if bug:
        with torch.cuda.stream(s):
            ext.scale_on_env_stream(x_ffi)  # the bug
        torch.cuda.synchronize()
        return
    streamlike = need("streamlike")
    with streamlike.use(s):  # torch, tvm-ffi and streamlike all on s
        assert tvm_ffi.get_raw_stream(dev) == s.cuda_stream, (tvm_ffi.get_raw_stream(dev), s.cuda_stream)
        ext.scale_on_env_stream(x_ffi)
    with torch.cuda.stream(s):
        ext.scale_on_env_stream(x)  # a torch tensor: tvm-ffi sets its stream from torch's for the call
    with tvm_ffi.use_torch_stream(torch.cuda.stream(s)):  # tvm-ffi's own way to follow torch
        ext.scale_on_env_stream(x_ffi)
    torch.cuda.synchronize()
    assert float(x.sum()) == 1024 * 8.0, float(x.sum())  # ones, doubled three times


def said(e):
    """What CUDA or the framework answered the bug with, for the corpus's failure output."""
    print(f"gpu_frameworks.py: the bug's error: {type(e).__name__}: {e}", file=sys.stderr)


def torch_sync_inside_graph(bug):
    torch = need("torch")
    x = torch.ones(256, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        (x * 2).sum()  # warm-up outside the capture, as torch asks
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    if bug:
        try:
            with torch.cuda.graph(g):
                (x * 2).sum()  # the warmed-up work
                torch.cuda.synchronize()  # the bug
        except RuntimeError as e:  # CUDA refused it and invalidated the capture: the report came first
            said(e)
        return
    with torch.cuda.graph(g):
        y = x * 2
    g.replay()
    torch.cuda.synchronize()
    assert float(y.sum()) == 512.0, float(y.sum())


def cuda_malloc_inside_graph(bug):
    torch, cupy = need("torch"), need("cupy")
    cupy.cuda.runtime.free(cupy.cuda.runtime.malloc(256))  # CuPy's runtime set up outside the capture
    x = torch.ones(256, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        x.mul_(2)  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    if bug:
        buffer = None
        try:
            with torch.cuda.graph(g):
                x.mul_(2)
                buffer = cupy.cuda.runtime.malloc(1024)  # the bug
        except RuntimeError as e:  # CuPy's CUDARuntimeError is one; so is torch's capture_end
            said(e)
        if buffer is not None:
            cupy.cuda.runtime.free(buffer)
        return
    buffer = cupy.cuda.runtime.malloc(1024)  # allocated before the capture
    with torch.cuda.graph(g):
        x.mul_(2)
    cupy.cuda.runtime.free(buffer)  # and freed after it
    g.replay()
    torch.cuda.synchronize()
    assert float(x.sum()) == 256 * 4.0, float(x.sum())  # ones, doubled by the warm-up and by the replay


def foreign_event_sync_inside_cupy_capture(bug):
    torch, cupy = need("torch"), need("cupy")
    event = torch.cuda.Event()
    event.record()
    stream = cupy.cuda.Stream(non_blocking=True)
    x = cupy.ones(16, dtype=cupy.float32)
    x *= 2  # warm-up: the kernel is compiled and loaded outside the capture
    cupy.cuda.Device().synchronize()  # the capturing stream does not wait for the legacy one
    if not bug:
        event.synchronize()  # before the capture
    graph = None
    with stream:
        # A library that captures in global mode (CuPy's own default is relaxed).
        stream.begin_capture(mode=cupy.cuda.runtime.streamCaptureModeGlobal)
        try:
            x *= 2
            if bug:
                event.synchronize()  # the bug
        except RuntimeError as e:  # CUDA refused it and invalidated the capture
            said(e)
        finally:
            try:
                graph = stream.end_capture()
            except cupy.cuda.runtime.CUDARuntimeError as e:
                if not bug:
                    raise
                said(e)
    if not bug:
        graph.launch(stream=stream)
        stream.synchronize()
        assert float(x.sum()) == 16 * 4.0, float(x.sum())


def library_on_its_own_stream(torch, ext, x, wait):
    # A library that runs its kernel on a stream of its own and orders its caller's stream after it,
    # but must also order its stream after the caller's work on x: without the wait it reads x early.
    caller = torch.cuda.current_stream()
    own = torch.cuda.Stream()
    if wait:
        own.wait_stream(caller)
    ext.scale_on_stream(x, own.cuda_stream)  # the bug
    caller.wait_stream(own)


def library_side_stream_not_waiting(bug):
    torch = need("torch")
    ext = corpus_extension(torch)
    s1 = torch.cuda.Stream()
    with torch.cuda.stream(s1):
        x = torch.full((N,), 3.0, device="cuda")  # written on s1
        library_on_its_own_stream(torch, ext, x, wait=not bug)
        total = x.sum()
    torch.cuda.current_stream().wait_stream(s1)
    torch.cuda.synchronize()
    if not bug:
        assert float(total) == N * 6.0, float(total)


DOUBLE_SOURCE = r"""
extern "C" __global__ void double_them(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2;
}
"""


def need_cupy_device():
    """CuPy, with a device it can use (asked of CuPy, for the shapes that import no torch)."""
    cupy = need("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            raise RuntimeError("no device")
    except Exception as e:
        print(f"gpu_frameworks.py: CuPy sees no CUDA device ({e}); skipped")
        sys.exit(SKIP)
    return cupy


def cupy_view(cupy, tensor):
    """A CuPy array over a float32 torch tensor's memory: no copy, and no CUDA call."""
    memory = cupy.cuda.UnownedMemory(tensor.data_ptr(), tensor.numel() * 4, tensor, tensor.device.index)
    return cupy.ndarray(tuple(tensor.shape), cupy.float32, cupy.cuda.MemoryPointer(memory, 0))


def double_on_side_stream(torch, cupy, y, side, ordered):
    # Doubles y, written on the current stream and read there after, with a CuPy kernel on the side
    # stream: ordered by events both ways (the side stream waits for the current one, and the
    # current one for it), or not at all.
    current = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    if ordered:
        side.wait_event(current.record())
    kernel, view = cupy.RawKernel(DOUBLE_SOURCE, "double_them"), cupy_view(cupy, y)
    kernel(((view.size + 255) // 256,), (256,), (view, cupy.int32(view.size)), stream=side)  # the bug
    if ordered:
        current.wait_event(side.record())


def cupy_kernel_on_side_stream_unordered(bug):
    torch, cupy = need("torch"), need("cupy")
    x = torch.ones(N, device="cuda")
    s = torch.cuda.Stream()
    side = cupy.cuda.Stream(non_blocking=True)
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = x + 1
        double_on_side_stream(torch, cupy, y, side, ordered=not bug)
        total = y.sum()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    if not bug:
        assert float(total) == N * 4.0, float(total)


def torch_free():
    """Asserts that the shape ran without torch, as it claims to (nothing it used imported it)."""
    assert "torch" not in sys.modules, "torch was imported"


# Correct programs: each orders its work on other streams with the current one, must cause no
# report, and returns what it read back, which corpus.py compares with the result it expects.


def library_on_a_side_stream_it_is_handed():
    # A C library handed the caller's side stream: the side stream waits for the caller's, the
    # library launches there, and the caller's waits for it.
    torch = need("torch")
    ext = corpus_extension(torch)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(s1):
        x = torch.full((N,), 3.0, device="cuda")
        s2.wait_stream(s1)
        ext.scale_on_stream(x, s2.cuda_stream)
        s1.wait_stream(s2)
        total = x.sum()
    torch.cuda.current_stream().wait_stream(s1)
    return [float(total)]


def cupy_kernel_on_side_stream_ordered_by_events():
    # The fixed twin of cupy-kernel-on-side-stream-unordered, inside torch.cuda.stream(s) and again
    # inside streamlike.use(s) (which makes s CuPy's current stream too).
    torch, cupy = need("torch"), need("cupy")
    streamlike = need("streamlike")
    x = torch.ones(N, device="cuda")
    s = torch.cuda.Stream()
    side = cupy.cuda.Stream(non_blocking=True)
    totals = []
    for scope in (lambda: torch.cuda.stream(s), lambda: streamlike.use(s)):
        s.wait_stream(torch.cuda.current_stream())  # x, written on the default stream
        with scope():
            y = x + 1
            double_on_side_stream(torch, cupy, y, side, ordered=True)
            total = y.sum()
        torch.cuda.current_stream().wait_stream(s)
        totals.append(float(total))
    return totals


def nccl_async_collective_in_side_stream():
    # torch.distributed's NCCL backend, one rank: its collective runs on NCCL's stream (torch's
    # NCCL stream waits for the current one, and work.wait() makes the current one wait for it),
    # the communicator made at the first collective, inside the side stream.
    torch = need("torch")
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_nccl_available()):
        print("gpu_frameworks.py: torch has no NCCL backend; skipped")
        sys.exit(SKIP)
    torch.cuda.set_device(0)
    with tempfile.TemporaryDirectory() as folder:
        store = "file://" + os.path.join(folder, "store")
        dist.init_process_group("nccl", init_method=store, rank=0, world_size=1)
        try:
            t = torch.ones(N, device="cuda")
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                y = t * 2
                dist.all_reduce(y, async_op=True).wait()
                total = (y + 1).sum()
            torch.cuda.current_stream().wait_stream(s)
            value = float(total)
        finally:
            dist.destroy_process_group()
    return [value]


def cudnn_first_convolution_in_side_stream():
    # The process's first convolution, inside a side stream: cuDNN makes its handle (and whatever
    # streams of its own it keeps) there, and torch gives it the current stream.
    torch = need("torch")
    if not (torch.backends.cudnn.is_available() and torch.backends.cudnn.enabled):
        print("gpu_frameworks.py: torch has no cuDNN enabled; skipped")
        sys.exit(SKIP)
    x = torch.ones(1, 4, 16, 16, device="cuda")
    w = torch.ones(8, 4, 3, 3, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = torch.nn.functional.conv2d(x, w)
        total = y.sum()
    torch.cuda.current_stream().wait_stream(s)
    return [float(total)]


def jax_beside_torch_through_dlpack():
    # JAX and torch in one process, arrays exchanged by DLPack inside torch.cuda.stream(s): torch's
    # export makes JAX's stream wait for s, JAX computes on XLA's own streams, and JAX's export
    # makes s wait for them.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # beside torch's allocator
    os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.05")
    torch, jax = need("torch"), need("jax")
    import jax.numpy as jnp

    try:
        jax.devices("gpu")
    except RuntimeError as e:
        print(f"gpu_frameworks.py: JAX has no GPU backend ({e}); skipped")
        sys.exit(SKIP)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.arange(N, dtype=torch.float32, device="cuda")
        j = jnp.from_dlpack(x)
        k = j * 2 + 1
        y = torch.from_dlpack(k)
        total = (y + 1).sum()
    torch.cuda.current_stream().wait_stream(s)
    return [float(total)]


def torch_default_stream_block_inside_use():
    # torch's own block naming its default stream, inside streamlike.use(s) with tvm-ffi loaded:
    # the inner block wins for torch (x was made on the default stream, and y is read there), while
    # tvm-ffi's stream stays the scope's.
    torch, tvm_ffi = need("torch"), need("tvm_ffi")
    streamlike = need("streamlike")
    x = torch.ones(N, device="cuda")
    s = torch.cuda.Stream()
    dev = tvm_ffi.device("cuda", x.device.index or 0)
    with streamlike.use(s):
        assert tvm_ffi.get_raw_stream(dev) == s.cuda_stream, (tvm_ffi.get_raw_stream(dev), s.cuda_stream)
        with torch.cuda.stream(torch.cuda.default_stream()):
            y = x * 2
    return [float(y.sum())]


def launch_double(cupy, x, stream=None):
    """A CuPy RawKernel doubling the float32 array x, on `stream` (None: CuPy's current stream)."""
    kernel = cupy.RawKernel(DOUBLE_SOURCE, "double_them")
    kernel(((x.size + 255) // 256,), (256,), (x, cupy.int32(x.size)), stream=stream)


def cupy_alone_on_its_stream():
    # CuPy alone, no torch: CuPy's `with stream:`, kernels on its current stream and on the stream given.
    cupy = need_cupy_device()
    with cupy.cuda.Stream() as s:
        x = cupy.arange(N, dtype=cupy.float32)
        launch_double(cupy, x)
        launch_double(cupy, x, stream=s)
        total = float(x.sum())
    torch_free()
    return [total]


ADD_ONE_PTX = b"""
.version 7.0
.target sm_52
.address_size 64
.visible .entry add_one(.param .u64 data, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<7>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [data];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r6, [%rd4];
  add.s32 %r6, %r6, 1;
  st.global.u32 [%rd4], %r6;
DONE:
  ret;
}
"""


def cuda_driver():
    """libcuda through ctypes, each call used here with its argument types; exits 77 without a device."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        print(f"gpu_frameworks.py: no CUDA driver ({e}); skipped")
        sys.exit(SKIP)
    p, u32, size, u64 = ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t, ctypes.c_uint64
    prototypes = {
        "cuInit": [u32],
        "cuDeviceGetCount": [ctypes.POINTER(ctypes.c_int)],
        "cuDevicePrimaryCtxRetain": [ctypes.POINTER(p), ctypes.c_int],
        "cuDevicePrimaryCtxRelease_v2": [ctypes.c_int],
        "cuCtxSetCurrent": [p],
        "cuModuleLoadData": [ctypes.POINTER(p), ctypes.c_char_p],
        "cuModuleGetFunction": [ctypes.POINTER(p), p, ctypes.c_char_p],
        "cuModuleUnload": [p],
        "cuMemAlloc_v2": [ctypes.POINTER(u64), size],
        "cuMemFree_v2": [u64],
        "cuMemsetD32Async": [u64, u32, size, p],
        "cuLaunchKernel": [p, u32, u32, u32, u32, u32, u32, u32, p, ctypes.POINTER(p), ctypes.POINTER(p)],
        "cuMemcpyDtoHAsync_v2": [p, u64, size, p],
    }
    for name, argtypes in prototypes.items():
        getattr(cuda, name).argtypes = argtypes
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        print("gpu_frameworks.py: no CUDA device; skipped")
        sys.exit(SKIP)
    return cuda


def checked(what, code):
    assert code == 0, f"{what} failed: CUresult {code}"


def streamlike_use_alone_with_a_driver_launch():
    # The streamlike package alone, no torch nor CuPy: inside streamlike.use(s), a library asks for
    # the current stream and launches there through the driver (a memset, a kernel, a copy back).
    cuda = cuda_driver()
    streamlike = need("streamlike")
    s = streamlike.Stream.create(device=0)
    context = ctypes.c_void_p()
    checked("cuDevicePrimaryCtxRetain", cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), 0))
    checked("cuCtxSetCurrent", cuda.cuCtxSetCurrent(context))
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    checked("cuModuleLoadData", cuda.cuModuleLoadData(ctypes.byref(module), ADD_ONE_PTX))
    checked("cuModuleGetFunction", cuda.cuModuleGetFunction(ctypes.byref(function), module, b"add_one"))
    data, n = ctypes.c_uint64(), ctypes.c_uint(N)
    checked("cuMemAlloc", cuda.cuMemAlloc_v2(ctypes.byref(data), N * 4))
    host = (ctypes.c_int * N)()
    params = (ctypes.c_void_p * 2)(ctypes.addressof(data), ctypes.addressof(n))
    with streamlike.use(s):
        stream = ctypes.c_void_p(streamlike.current_stream().handle)
        assert stream.value == s.handle, (stream.value, s.handle)
        checked("cuMemsetD32Async", cuda.cuMemsetD32Async(data, 3, N, stream))
        launched = cuda.cuLaunchKernel(function, (N + 255) // 256, 1, 1, 256, 1, 1, 0, stream, params, None)
        checked("cuLaunchKernel", launched)
        checked("cuMemcpyDtoHAsync", cuda.cuMemcpyDtoHAsync_v2(host, data, N * 4, stream))
        s.sync()
    checked("cuMemFree", cuda.cuMemFree_v2(data))
    checked("cuModuleUnload", cuda.cuModuleUnload(module))
    checked("cuDevicePrimaryCtxRelease", cuda.cuDevicePrimaryCtxRelease_v2(0))
    torch_free()
    assert "cupy" not in sys.modules, "CuPy was imported"
    return [float(sum(host))]


SHAPES = {
    "torch-extension-on-stream-zero": torch_extension_on_stream_zero,
    "cupy-op-inside-torch-stream": cupy_op_inside_torch_stream,
    "tvm-ffi-env-stream-not-following-torch": tvm_ffi_env_stream_not_following_torch,
    "torch-sync-inside-graph": torch_sync_inside_graph,
    "cuda-malloc-inside-graph": cuda_malloc_inside_graph,
    "foreign-event-sync-inside-cupy-capture": foreign_event_sync_inside_cupy_capture,
    "library-side-stream-not-waiting": library_side_stream_not_waiting,
    "cupy-kernel-on-side-stream-unordered": cupy_kernel_on_side_stream_unordered,
}
CORRECT = {
    "library-on-a-side-stream-it-is-handed": library_on_a_side_stream_it_is_handed,
    "cupy-kernel-on-side-stream-ordered-by-events": cupy_kernel_on_side_stream_ordered_by_events,
    "nccl-async-collective-in-side-stream": nccl_async_collective_in_side_stream,
    "cudnn-first-convolution-in-side-stream": cudnn_first_convolution_in_side_stream,
    "jax-beside-torch-through-dlpack": jax_beside_torch_through_dlpack,
    "torch-default-stream-block-inside-use": torch_default_stream_block_inside_use,
    "cupy-alone-on-its-stream": cupy_alone_on_its_stream,
    "streamlike-use-alone-with-a-driver-launch": streamlike_use_alone_with_a_driver_launch,
}
# Shapes that import no torch (each asks for its device itself): the check below would import it.
TORCH_FREE = {
    "cupy-alone-on-its-stream",
    "streamlike-use-alone-with-a-driver-launch",
}

if __name__ == "__main__":
    variants = {**{name: ("bug", "fixed") for name in SHAPES}, **{name: ("correct",) for name in CORRECT}}
    if len(sys.argv) != 3 or sys.argv[2] not in variants.get(sys.argv[1], ()):
        sys.exit(
            f"usage: gpu_frameworks.py {{{','.join(SHAPES)}}} bug|fixed\n"
            f"       gpu_frameworks.py {{{','.join(CORRECT)}}} correct"
        )
    shape, variant = sys.argv[1], sys.argv[2]
    if shape not in TORCH_FREE:
        torch = need("torch")
        if not torch.cuda.is_available():
            print("gpu_frameworks.py: no CUDA device; skipped")
            sys.exit(SKIP)
    if variant == "correct":
        result = CORRECT[shape]()
        print(f"gpu_frameworks.py: {shape}: result {' '.join(f'{v:.1f}' for v in result)}")
    else:
        SHAPES[shape](variant == "bug")
