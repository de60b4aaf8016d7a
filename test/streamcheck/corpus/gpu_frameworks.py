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
"""


def torch_extension_on_stream_zero(bug):
    torch = need("torch")
    from torch.utils import cpp_extension

    try:
        ext = cpp_extension.load_inline(
            name="streamcheck_corpus_extension",
            cpp_sources="void scale_on_stream_zero(torch::Tensor x);\nvoid scale_on_current_stream(torch::Tensor x);",
            cuda_sources=EXTENSION_SOURCE,
            functions=["scale_on_stream_zero", "scale_on_current_stream"],
        )
    except Exception as e:  # no nvcc or ninja for torch's extension builder
        print(f"gpu_frameworks.py: cannot build a torch extension ({e}); skipped")
        sys.exit(SKIP)
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


SHAPES = {
    "torch-extension-on-stream-zero": torch_extension_on_stream_zero,
    "cupy-op-inside-torch-stream": cupy_op_inside_torch_stream,
    "tvm-ffi-env-stream-not-following-torch": tvm_ffi_env_stream_not_following_torch,
    "torch-sync-inside-graph": torch_sync_inside_graph,
    "cuda-malloc-inside-graph": cuda_malloc_inside_graph,
    "foreign-event-sync-inside-cupy-capture": foreign_event_sync_inside_cupy_capture,
}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in SHAPES or sys.argv[2] not in ("bug", "fixed"):
        sys.exit(f"usage: gpu_frameworks.py {{{','.join(SHAPES)}}} bug|fixed")
    torch = need("torch")
    if not torch.cuda.is_available():
        print("gpu_frameworks.py: no CUDA device; skipped")
        sys.exit(SKIP)
    SHAPES[sys.argv[1]](sys.argv[2] == "bug")
