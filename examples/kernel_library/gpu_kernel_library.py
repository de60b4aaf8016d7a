"""The kernel library on a GPU, one table of faces across frameworks (docs/kernel-library.md).

For every face (the torch operators, the nanobind module called with torch tensors, the nanobind
module called with CuPy arrays, the tvm-ffi functions, the XLA FFI targets under jax.jit):
  * it runs on its framework's current stream: the ordering probe holds a non-default stream made
    current in that framework (a gate, then a copy x -> t queued behind it), the operation reads t;
    the result is right only if the operation was queued on that stream behind the gate (an
    operation on any other stream reads t's zeros), and nothing waited for the gate (it opens only
    after every call returned);
  * it runs under its framework's graph capture (torch.cuda.graph, CuPy's stream capture, JAX with
    XLA's command buffers on and off) and replays with right values, also after its inputs changed;
  * every framework's current stream (torch's, CuPy's, tvm-ffi's, the streamlike package's) is
    what it was, inside the block after each call and after the block.

Skipped without a GPU; a face whose framework (or compiled part) is missing skips, and fails
instead with STREAMLIKE_REQUIRE_GPU=1 (numba-cuda, not on every GPU machine, only skips). Run by hand on a GPU machine:

    meson compile -C BUILD kernel-library
    KERNEL_LIBRARY_DIR=BUILD/examples/kernel_library PYTHONPATH=BUILD/examples/kernel_library:examples/kernel_library \
        python3 -m pytest -v examples/kernel_library/gpu_kernel_library.py
"""

import importlib
import os
import subprocess
import sys
from pathlib import Path

import kernel_library
import pytest

REQUIRE = os.environ.get("STREAMLIKE_REQUIRE_GPU") == "1"
if os.environ.get("STREAMLIKE_PACKAGE_SITE"):  # the installed streamlike package, on the GPU machine
    sys.path.insert(0, os.environ["STREAMLIKE_PACKAGE_SITE"])
HERE = Path(__file__).resolve().parent
N = 1 << 16
A = 3.0
TIMEOUT_S = 20.0


def missing(why):
    if REQUIRE:
        pytest.fail(f"{why} (STREAMLIKE_REQUIRE_GPU=1: a missing framework is a failure)")
    pytest.skip(why)


def need(module):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        missing(f"{module} is not importable: {e}")


def face_part(load, what):
    try:
        return load()
    except ImportError as e:
        missing(f"{what}: {e}")


def _gpu_present():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001  (no CuPy, or no driver: ask torch)
        pass
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


if not _gpu_present():
    if REQUIRE:
        pytest.fail(
            "STREAMLIKE_REQUIRE_GPU=1 but no CUDA device is visible (or neither CuPy nor torch sees one)", pytrace=False
        )
    pytest.skip("no CUDA device (or no driver, or neither CuPy nor torch to reach one)", allow_module_level=True)


class Handle:
    """A stream given to the nanobind module by its handle alone (__cuda_stream__)."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


# --- every framework's current stream -----------------------------------------------------------


def current_streams():
    """Each loaded framework's current stream on device 0, as the framework names it."""
    seen = {}
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        s = torch.cuda.current_stream(0)
        seen["torch"] = (s.cuda_stream, s.stream_id)
    if "cupy" in sys.modules:
        seen["cupy"] = id(sys.modules["cupy"].cuda.get_current_stream())
    if "tvm_ffi" in sys.modules:
        tvm_ffi = sys.modules["tvm_ffi"]
        seen["tvm-ffi"] = tvm_ffi.get_raw_stream(tvm_ffi.device("cuda", 0))
    if "streamlike" in sys.modules:
        seen["streamlike"] = sys.modules["streamlike"].current_stream(0).handle
    return seen


# --- the faces ----------------------------------------------------------------------------------


class TorchArrays:
    """Arrays and streams made with torch."""

    def __init__(self):
        self.torch = need("torch")
        if not self.torch.cuda.is_available():
            missing("torch sees no CUDA device")

    def array(self, values):
        return self.torch.tensor(values, dtype=self.torch.float32, device="cuda")

    def zeros(self, n):
        return self.torch.zeros(n, dtype=self.torch.float32, device="cuda")

    def host(self, array):
        return array.cpu().tolist()

    def new_stream(self):
        s = self.torch.cuda.Stream()
        return s, s.cuda_stream

    def sync(self):
        self.torch.cuda.synchronize()

    def copy_in(self, array, values):
        array.copy_(self.array(values))


class CupyArrays:
    def __init__(self):
        self.cupy = need("cupy")

    def array(self, values):
        return self.cupy.asarray(values, dtype=self.cupy.float32)

    def zeros(self, n):
        return self.cupy.zeros(n, dtype=self.cupy.float32)

    def host(self, array):
        return self.cupy.asnumpy(array).tolist()

    def new_stream(self):
        s = self.cupy.cuda.Stream(non_blocking=True)
        return s, s.ptr

    def sync(self):
        self.cupy.cuda.Device(0).synchronize()

    def copy_in(self, array, values):
        array[...] = self.array(values)


class TorchOperators(TorchArrays):
    name = "torch operators"

    def __init__(self):
        super().__init__()
        self.ops = face_part(kernel_library.torch_ops, "the torch operators")

    def scale_add(self, a, x, y):
        self.ops.scale_add_(a, x, y)

    def sum(self, x, out):
        out.copy_(self.ops.sum(x))

    def block(self, stream):
        return self.torch.cuda.stream(stream)

    def capture(self, work):
        graph = self.torch.cuda.CUDAGraph()
        with self.torch.cuda.graph(graph):
            work()
        return graph.replay


class TorchNanobind(TorchArrays):
    name = "nanobind module, torch tensors"

    def __init__(self):
        super().__init__()
        self.nb = face_part(kernel_library.nanobind_module, "the nanobind module")

    def scale_add(self, a, x, y):
        self.nb.scale_add(a, x, y)

    def sum(self, x, out):
        self.nb.sum(x, out)

    block = TorchOperators.block
    capture = TorchOperators.capture


class CupyNanobind(CupyArrays):
    name = "nanobind module, CuPy arrays"

    def __init__(self):
        super().__init__()
        # CuPy's current stream is read through the streamlike package (docs/current-stream.md).
        self.streamlike = need("streamlike")
        self.nb = face_part(kernel_library.nanobind_module, "the nanobind module")
        if not self.nb.linked_to_package:
            pytest.fail("the nanobind module did not link the streamlike package's current stream")

    def scale_add(self, a, x, y):
        self.nb.scale_add(a, x, y)

    def sum(self, x, out):
        self.nb.sum(x, out)

    def block(self, stream):
        return stream

    def capture(self, work):
        stream = self.cupy.cuda.Stream(non_blocking=True)
        with stream:
            stream.begin_capture()
            try:
                work()
            finally:
                graph = stream.end_capture()

        def replay():
            graph.launch(stream)

        return replay


class DLPackOnly:
    """A torch tensor handed to tvm-ffi through __dlpack__ alone. Given a torch tensor itself,
    tvm-ffi makes torch's current stream its own for the call (its DLPack exchange with torch), so
    torch would decide; through plain DLPack tvm-ffi takes no stream from the producer, and the
    stream its functions see is the one its caller set (tvm_ffi.use_raw_stream). stream=-1: tvm-ffi
    asks without a stream, which older torch reads as "synchronize with the default stream",
    a wait that would break a graph capture; the functions run on the caller's stream anyway."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, **kwargs):
        kwargs["stream"] = -1
        return self.tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


class TvmFfiFunctions(TorchArrays):
    """tvm-ffi's functions on torch-made arrays; the stream is made current in tvm-ffi only
    (tvm_ffi.use_raw_stream), torch stays on its default stream."""

    name = "tvm-ffi functions"

    def __init__(self):
        super().__init__()
        self.tvm_ffi = need("tvm_ffi")
        self.mod = face_part(kernel_library.tvm_ffi_module, "the tvm-ffi functions")

    def scale_add(self, a, x, y):
        self.mod.scale_add(a, DLPackOnly(x), DLPackOnly(y))

    def sum(self, x, out):
        self.mod.sum(DLPackOnly(x), DLPackOnly(out))

    def block(self, stream):
        return self.tvm_ffi.use_raw_stream(self.tvm_ffi.device("cuda", 0), stream.cuda_stream)

    def capture(self, work):
        graph = self.torch.cuda.CUDAGraph()
        with self.torch.cuda.graph(graph):
            with self.tvm_ffi.use_raw_stream(
                self.tvm_ffi.device("cuda", 0), self.torch.cuda.current_stream().cuda_stream
            ):
                work()
        return graph.replay


FACES = [TorchOperators, TorchNanobind, CupyNanobind, TvmFfiFunctions]


@pytest.fixture(params=FACES, ids=[f.name for f in FACES])
def face(request):
    return request.param()


def probe_values(n=N):
    x = [float((i % 7) + 1) for i in range(n)]  # never 0: an operation that read t's zeros shows
    y = [float(i % 5) for i in range(n)]
    return x, y


def load_kernels_first(face, nb):
    """Runs every kernel of the probe once, with the gate open. CUDA loads a module's kernels at
    their first launch (lazy loading, the default), and a load may wait for the device: a first
    launch queued behind the closed gate would wait for the gate, which opens only after it."""
    scratch, total = face.zeros(N), face.zeros(1)
    gate = nb.Gate()
    gate.open()
    nb.gated_copy(gate, scratch, scratch, TIMEOUT_S)
    face.scale_add(A, scratch, scratch)
    face.sum(scratch, total)
    face.sync()


def test_runs_on_the_frameworks_current_stream(face):
    """The ordering probe: behind a closed gate on the framework's current stream."""
    nb = face_part(kernel_library.nanobind_module, "the nanobind module (its probe)")
    x_values, y_values = probe_values()
    x, y = face.array(x_values), face.array(y_values)
    t = face.zeros(N)
    out = face.zeros(1)
    load_kernels_first(face, nb)
    face.sync()
    stream, handle = face.new_stream()
    gate = nb.Gate()
    outside = current_streams()
    with face.block(stream):
        inside = current_streams()
        assert inside != outside, "the framework's block changed nothing it reports"
        nb.gated_copy(gate, x, t, TIMEOUT_S, Handle(handle))
        face.scale_add(A, t, y)
        assert current_streams() == inside
        face.sum(t, out)
        assert current_streams() == inside
    assert current_streams() == outside
    assert not gate.timed_out, "something waited for the gate (a synchronization hidden in a call)"
    gate.open()
    face.sync()
    assert gate.started and not gate.timed_out
    assert face.host(y) == [A * xv + yv for xv, yv in zip(x_values, y_values, strict=True)]
    assert face.host(out) == [float(sum(x_values))]


def test_runs_under_graph_capture_and_replays(face):
    n = 4096
    x_values, y_values = probe_values(n)
    x, y, out = face.array(x_values), face.array(y_values), face.zeros(1)
    face.sync()
    before = current_streams()

    def work():
        face.scale_add(A, x, y)
        face.sum(y, out)

    replay = face.capture(work)
    assert current_streams() == before
    face.sync()
    assert face.host(y) == y_values, "capture ran the work instead of recording it"
    for round_ in range(2):
        xs = [v + round_ for v in x_values]
        face.copy_in(x, xs)
        face.copy_in(y, y_values)
        face.sync()
        replay()
        face.sync()
        expected = [A * xv + yv for xv, yv in zip(xs, y_values, strict=True)]
        assert face.host(y) == expected
        assert face.host(out) == [float(sum(expected))]
    assert current_streams() == before


# --- the nanobind module given other libraries' arrays and streams explicitly ----------------------


def numba_cuda_setup():
    # Optional everywhere: the GPU machine's required set (torch, CuPy, cuda.core, JAX, tvm-ffi)
    # has no numba-cuda, so its absence skips even with STREAMLIKE_REQUIRE_GPU=1.
    pytest.importorskip("numba")
    from numba import cuda

    if not cuda.is_available():
        pytest.skip("numba-cuda sees no GPU")
    import numpy

    stream = cuda.stream()
    return {
        "array": lambda values: cuda.to_device(numpy.asarray(values, dtype=numpy.float32), stream=stream),
        "host": lambda array: array.copy_to_host(stream=stream).tolist(),
        "stream": stream,
        "sync": stream.synchronize,
    }


def cuda_core_setup():
    core = need("cuda.core")
    cupy = need("cupy")
    device = core.Device(0)
    device.set_current()
    stream = device.create_stream()
    return {
        "array": lambda values: cupy.asarray(values, dtype=cupy.float32),
        "host": lambda array: cupy.asnumpy(array).tolist(),
        "stream": stream,
        "sync": cupy.cuda.Device(0).synchronize,  # the whole device: CuPy made the arrays on its own stream
    }


EXPLICIT = {"numba-cuda arrays and stream": numba_cuda_setup, "cuda.core stream, CuPy arrays": cuda_core_setup}


@pytest.mark.parametrize("library", sorted(EXPLICIT))
def test_the_nanobind_module_runs_on_a_stream_it_is_given(library):
    """The ordering probe with the stream passed explicitly (__cuda_stream__) and arrays read
    through __cuda_array_interface__: queued behind the gate on that stream, whatever is current."""
    nb = face_part(kernel_library.nanobind_module, "the nanobind module")
    setup = EXPLICIT[library]()
    x_values, y_values = probe_values()
    x, y = setup["array"](x_values), setup["array"](y_values)
    t, out = setup["array"]([0.0] * N), setup["array"]([0.0])
    setup["sync"]()
    gate = nb.Gate()
    before = current_streams()
    nb.gated_copy(gate, x, t, TIMEOUT_S, setup["stream"])
    nb.scale_add(A, t, y, setup["stream"])
    nb.sum(t, out, setup["stream"])
    assert current_streams() == before
    assert not gate.timed_out
    gate.open()
    setup["sync"]()
    assert gate.started and not gate.timed_out
    assert setup["host"](y) == [A * xv + yv for xv, yv in zip(x_values, y_values, strict=True)]
    assert setup["host"](out) == [float(sum(x_values))]


# --- JAX: XLA FFI targets under jax.jit, in a process per command-buffer setting ------------------

COMMAND_BUFFERS = {
    "command buffers off": "--xla_gpu_enable_command_buffer=",
    "command buffers on": "--xla_gpu_enable_command_buffer=CUSTOM_CALL --xla_gpu_graph_min_graph_size=1",
}


@pytest.mark.parametrize("setting", sorted(COMMAND_BUFFERS))
def test_xla_ffi_targets_under_jit(setting):
    need("jax")
    face_part(kernel_library.nanobind_module, "the nanobind module (its probe)")
    if not (kernel_library.LIBRARY_DIR / "libkernel_library_xla.so").is_file():
        missing("the XLA FFI targets were not built (no XLA FFI headers found at setup)")
    env = dict(os.environ, XLA_FLAGS=COMMAND_BUFFERS[setting], XLA_PYTHON_CLIENT_PREALLOCATE="false")
    expect_capture = "1" if setting.endswith("on") else "0"
    result = subprocess.run(
        [sys.executable, str(HERE / "jax_kernel_library.py"), expect_capture],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    print(result.stdout, result.stderr)
    if result.returncode == 77:
        missing(result.stdout.strip().splitlines()[-1] if result.stdout.strip() else "jax: skipped")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS" in result.stdout
