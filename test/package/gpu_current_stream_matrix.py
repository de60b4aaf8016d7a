"""The current-stream conformance matrix (current_stream_matrix.py) on a GPU, against torch, CuPy
and tvm-ffi themselves: the same cases and the same assertion helper as the CPU run
(test_current_stream_matrix.py), with a torch op run inside every innermost block. Skips, saying
why, without a GPU, one of the three frameworks, or the bridge suite's current-stream module;
the rows of device 1 skip on a machine with one GPU."""

import contextlib
import ctypes
import glob
import importlib
import os
import sys

import current_stream_matrix as matrix
import pytest
from gpu_presence import skip_module_without_gpu

skip_module_without_gpu()

DL_CUDA = 2


class _Protocol:
    def __init__(self, handle, keep=None):
        self.handle = handle
        self._keep = keep

    def __cuda_stream__(self):
        return (0, self.handle)


def _tvm_library(tvm_ffi):
    """libtvm_ffi.so as tvm_ffi loaded it (the handle of the object already loaded)."""
    found = glob.glob(os.path.join(os.path.dirname(tvm_ffi.__file__), "**", "libtvm_ffi.so"), recursive=True)
    if not found:
        pytest.fail(f"tvm_ffi imports from {tvm_ffi.__file__} but its libtvm_ffi.so is not beside it")
    lib = ctypes.CDLL(found[0])
    lib.TVMFFIEnvGetStream.argtypes = [ctypes.c_int32, ctypes.c_int32]
    lib.TVMFFIEnvGetStream.restype = ctypes.c_void_p
    lib.TVMFFIEnvSetStream.argtypes = [ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    return lib


class RealFrameworks(matrix.Frameworks):
    def __init__(self, sl, bridge, torch, cupy, tvm):
        self.sl, self.bridge, self.torch, self.cupy, self.tvm = sl, bridge, torch, cupy, tvm
        self.device_count = torch.cuda.device_count()
        self.devices = tuple(range(min(2, self.device_count)))

    def make(self, kind, device):
        torch, cupy, sl = self.torch, self.cupy, self.sl
        if kind == "legacy":
            return _Protocol(1), 1, None
        if kind == "per_thread":
            return _Protocol(2), 2, None
        if kind == "created":
            s = sl.Stream.create(device=device)
            return s, s.handle, s
        if kind == "pool":
            pool = sl.StreamPool(2, device=device)
            s = pool.get()
            return s, s.handle, pool
        if kind == "torch":
            s = torch.cuda.Stream(device=device)
            return s, s.cuda_stream, s
        if kind == "cupy":
            with cupy.cuda.Device(device):
                s = cupy.cuda.Stream(non_blocking=True)
            return s, s.ptr, s
        if kind == "external":  # a stream streamlike did not make, known by its handle only
            with cupy.cuda.Device(device):
                s = cupy.cuda.Stream(non_blocking=True)
            return _Protocol(s.ptr, keep=s), s.ptr, s
        raise AssertionError(kind)

    def answer(self, framework, device):
        if framework == "torch":
            return self.torch.cuda.current_stream(device).cuda_stream
        if framework == "tvm-ffi":
            return self.tvm.TVMFFIEnvGetStream(DL_CUDA, device) or 0
        return self.cupy.cuda.get_current_stream(device).ptr

    @contextlib.contextmanager
    def block(self, framework, obj, handle, device):
        torch, cupy = self.torch, self.cupy
        if framework == "torch":
            if isinstance(obj, torch.cuda.Stream):
                stream = obj
            elif handle in (0, 1):
                stream = torch.cuda.default_stream(device)
            else:
                stream = torch.cuda.ExternalStream(handle, device=torch.device("cuda", device))
            with torch.cuda.stream(stream):
                yield
        elif framework == "tvm-ffi":
            original = ctypes.c_void_p()
            assert self.tvm.TVMFFIEnvSetStream(DL_CUDA, device, handle, ctypes.byref(original)) == 0
            try:
                yield
            finally:
                assert self.tvm.TVMFFIEnvSetStream(DL_CUDA, device, original, None) == 0
        else:
            if isinstance(obj, cupy.cuda.Stream):
                stream = obj
            elif handle in (0, 1):
                stream = cupy.cuda.Stream.null
            elif handle == 2:
                stream = cupy.cuda.Stream.ptds
            else:
                stream = cupy.cuda.ExternalStream(handle, device)
            with cupy.cuda.Device(device), stream:
                yield

    def current_device(self):
        return self.cupy.cuda.runtime.getDevice()

    def torch_object_is(self, obj, device):
        return self.torch.cuda.current_stream(device) == obj

    def cupy_current_object(self, device):
        return self.cupy.cuda.get_current_stream(device)

    def torch_op_runs(self, device):
        x = self.torch.ones(1 << 16, device=f"cuda:{device}")
        assert float((x * 2).sum().item()) == 2.0 * (1 << 16)


@pytest.fixture(scope="module")
def fw(streamlike):
    torch = pytest.importorskip("torch")
    cupy = pytest.importorskip("cupy")
    tvm_ffi = pytest.importorskip("tvm_ffi")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    where = os.environ.get("STREAMLIKE_BRIDGE_MODULES_DIR")
    if not where or not os.path.isdir(where):
        pytest.skip("the bridge suite's current-stream module was not built (the C++ scope's rows)")
    if where not in sys.path:
        sys.path.append(where)
    bridge = importlib.import_module("streamlike_current_nb_test")
    assert bridge.link_package()
    providers = streamlike.current_stream_providers()
    assert providers[:3] == ["torch", "tvm-ffi", "cupy"] and providers[-1] == "streamlike", providers
    return RealFrameworks(streamlike, bridge, torch, cupy, _tvm_library(tvm_ffi))


@pytest.mark.parametrize("case", matrix.CASES, ids=[c.id for c in matrix.CASES])
def test_matrix(fw, case):
    matrix.run_case(fw, case)


@pytest.mark.parametrize("kind", ["created", "torch", "cupy", "legacy"])
@pytest.mark.parametrize("device", [0, 1])
def test_a_use_block_left_on_another_thread(fw, kind, device):
    if device >= len(fw.devices):
        pytest.skip("needs two devices")
    matrix.run_exit_on_another_thread(fw, kind, device)


@pytest.mark.parametrize("what, declares, status", matrix.REGISTRATIONS, ids=[r[0] for r in matrix.REGISTRATIONS])
def test_a_framework_joining_from_c(fw, what, declares, status):
    matrix.run_registration(fw, declares, status)
