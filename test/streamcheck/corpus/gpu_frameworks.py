"""streamcheck's Python corpus: real bug shapes of torch, CuPy and tvm-ffi programs, each with its fix, run
by corpus.py under `python -m streamlike.check`. The line of each bug ends in `# the bug`, which
corpus.py finds to check the report's file:line. A bug variant catches the error CUDA answers its
bug with (the report came before it) and says it on stderr; a fixed variant lets every error
through and checks that its work was done (a capture replayed, a result read back).

usage: gpu_frameworks.py SHAPE bug|fixed
exits 77 without torch, CuPy or tvm-ffi where the shape needs it (or, for the fixed variants that
use it, the streamlike package) or a CUDA device"""

import sys

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


def cupy_null_stream_inside_cupy_stream(bug):
    # CuPy alone, no torch: inside CuPy's own `with stream:`, a kernel given the null stream (the
    # legacy default stream, which a non-blocking stream does not wait for).
    cupy = need_cupy_device()
    kernel = cupy.RawKernel(DOUBLE_SOURCE, "double_them")
    with cupy.cuda.Stream(non_blocking=True) as s:
        x = cupy.full(N, 3.0, dtype=cupy.float32)  # written on s
        stream = cupy.cuda.Stream.null if bug else s
        kernel(((N + 255) // 256,), (256,), (x, cupy.int32(N)), stream=stream)  # the bug
        total = float(x.sum())
    cupy.cuda.Device().synchronize()
    torch_free()
    if not bug:
        assert total == N * 6.0, total


SHAPES = {
    "torch-extension-on-stream-zero": torch_extension_on_stream_zero,
    "cupy-op-inside-torch-stream": cupy_op_inside_torch_stream,
    "tvm-ffi-env-stream-not-following-torch": tvm_ffi_env_stream_not_following_torch,
    "torch-sync-inside-graph": torch_sync_inside_graph,
    "cuda-malloc-inside-graph": cuda_malloc_inside_graph,
    "foreign-event-sync-inside-cupy-capture": foreign_event_sync_inside_cupy_capture,
    "library-side-stream-not-waiting": library_side_stream_not_waiting,
    "cupy-kernel-on-side-stream-unordered": cupy_kernel_on_side_stream_unordered,
    "cupy-null-stream-inside-cupy-stream": cupy_null_stream_inside_cupy_stream,
}
# Shapes that import no torch (each asks for its device itself): the check below would import it.
TORCH_FREE = {"cupy-null-stream-inside-cupy-stream"}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in SHAPES or sys.argv[2] not in ("bug", "fixed"):
        sys.exit(f"usage: gpu_frameworks.py {{{','.join(SHAPES)}}} bug|fixed")
    if sys.argv[1] not in TORCH_FREE:
        torch = need("torch")
        if not torch.cuda.is_available():
            print("gpu_frameworks.py: no CUDA device; skipped")
            sys.exit(SKIP)
    SHAPES[sys.argv[1]](sys.argv[2] == "bug")
