"""The current-stream conformance matrix (current_stream_matrix.py) on a CPU, against stand-ins.

The package is the one built against the fake CUDA (test/package/fake_cuda, preloaded with two
devices: STREAMLIKE_FAKE_CUDA_DEVICES=2); torch and tvm-ffi are the fake libtorch_cuda.so and
libtvm_ffi.so of test/fake_frameworks (loaded here, found by streamlike's built-in providers as the
real ones are), with a Python `torch` module over the fake shim; CuPy is a Python `cupy` module
whose current stream is a per-thread, per-device object, as CuPy keeps it. The C++ scope is the
bridge suite's bridge module (streamlike_current_nb_test), linked to the package.

    STREAMLIKE_FAKE_CUDA_DEVICES=2 LD_PRELOAD=$B/test/fake_cuda/libstreamlike_fake_cuda.so \\
    STREAMLIKE_FAKE_CUDA_LIBRARY=$B/test/fake_cuda/libstreamlike_fake_cuda.so \\
    STREAMLIKE_FAKE_FRAMEWORKS_DIR=$B/test/fake_frameworks STREAMLIKE_PACKAGE_SITE=$B/test/package/fake_cuda \\
    STREAMLIKE_BRIDGE_MODULES_DIR=$B/test/bridge python3 -m pytest test/package/test_current_stream_matrix.py
"""

import contextlib
import ctypes
import importlib
import os
import sys
import threading
import types

import current_stream_matrix as matrix
import fake_cupy
import pytest

_cuda_path = os.environ.get("STREAMLIKE_FAKE_CUDA_LIBRARY")
_frameworks_dir = os.environ.get("STREAMLIKE_FAKE_FRAMEWORKS_DIR")
if not _cuda_path or not _frameworks_dir:
    pytest.skip(
        "STREAMLIKE_FAKE_CUDA_LIBRARY / STREAMLIKE_FAKE_FRAMEWORKS_DIR are not set: this file runs against "
        "the preloaded fake CUDA and the fake frameworks (meson test package-current-stream-matrix)",
        allow_module_level=True,
    )

_cuda = ctypes.CDLL(_cuda_path)
_cuda.cudaGetDevice.argtypes = [ctypes.POINTER(ctypes.c_int)]
_cuda.cudaSetDevice.argtypes = [ctypes.c_int]
# Loaded globally under their sonames before streamlike asks anything: its providers find them.
_torch = ctypes.CDLL(os.path.join(_frameworks_dir, "libtorch_cuda.so"), mode=ctypes.RTLD_GLOBAL)
_torch.aoti_torch_get_current_cuda_stream.argtypes = [ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)]
_torch.torch_set_current_cuda_stream.argtypes = [ctypes.c_void_p, ctypes.c_int32]
_tvm = ctypes.CDLL(os.path.join(_frameworks_dir, "libtvm_ffi.so"), mode=ctypes.RTLD_GLOBAL)
_tvm.TVMFFIEnvGetStream.argtypes = [ctypes.c_int32, ctypes.c_int32]
_tvm.TVMFFIEnvGetStream.restype = ctypes.c_void_p
_tvm.TVMFFIEnvSetStream.argtypes = [ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
DL_CUDA = 2


def _current_device():
    d = ctypes.c_int(-1)
    assert _cuda.cudaGetDevice(ctypes.byref(d)) == 0
    return d.value


@contextlib.contextmanager
def _on_device(device):
    before = _current_device()
    assert _cuda.cudaSetDevice(device) == 0
    try:
        yield
    finally:
        _cuda.cudaSetDevice(before)


# --- torch: a Python module over the fake shim ---------------------------------------------------
class _TorchStream:
    """torch.cuda.Stream as streamlike sees it: __cuda_stream__, cuda_stream, device_index."""

    def __init__(self, handle, device, keep=None):
        self.cuda_stream = handle
        self.device_index = device
        self._keep = keep

    def __cuda_stream__(self):
        return (0, self.cuda_stream)


_torch_objects = threading.local()  # the object torch.cuda.set_stream made current, per device


def _torch_get(device):
    out = ctypes.c_void_p()
    assert _torch.aoti_torch_get_current_cuda_stream(device, ctypes.byref(out)) == 0
    return out.value or 0


def _torch_set_stream(s):
    assert _torch.torch_set_current_cuda_stream(s.cuda_stream, s.device_index) == 0
    _torch_objects.__dict__[s.device_index] = s


def _torch_current_stream(device):
    """The stream object set_stream made current while its handle still is, else a new one (an
    external stream, as torch makes for a handle set through its C shim)."""
    handle = _torch_get(device)
    obj = _torch_objects.__dict__.get(device)
    return obj if obj is not None and obj.cuda_stream == handle else _TorchStream(handle, device)


_torch_module = types.ModuleType("torch")
_torch_module.cuda = types.SimpleNamespace(
    Stream=_TorchStream, set_stream=_torch_set_stream, current_stream=_torch_current_stream
)


# --- CuPy: a Python module, a current stream object and a stack of blocks per thread and device ---
_cupy_module = fake_cupy.make(_current_device)
_cupy_cuda = _cupy_module.cuda
_CupyStream = _cupy_cuda.Stream
_cupy_get_current_stream = _cupy_cuda.get_current_stream


class _Protocol:
    """A foreign stream object: the protocol only."""

    def __init__(self, handle, keep=None):
        self.handle = handle
        self._keep = keep

    def __cuda_stream__(self):
        return (0, self.handle)


class FakeFrameworks(matrix.Frameworks):
    def __init__(self, sl, bridge):
        self.sl = sl
        self.bridge = bridge

    def make(self, kind, device):
        if kind == "legacy":
            return _Protocol(1), 1, None
        if kind == "per_thread":
            return _Protocol(2), 2, None
        if kind == "pool":
            pool = self.sl.StreamPool(2, device=device)
            s = pool.get()
            return s, s.handle, pool
        s = self.sl.Stream.create(device=device)
        if kind == "created":
            return s, s.handle, s
        if kind == "torch":
            return _TorchStream(s.handle, device, keep=s), s.handle, s
        if kind == "cupy":
            return _CupyStream(s.handle, device), s.handle, s
        if kind == "external":
            return _Protocol(s.handle, keep=s), s.handle, s
        raise AssertionError(kind)

    def answer(self, framework, device):
        if framework == "torch":
            return _torch_get(device)
        if framework == "tvm-ffi":
            return _tvm.TVMFFIEnvGetStream(DL_CUDA, device) or 0
        return _cupy_get_current_stream(device).ptr

    @contextlib.contextmanager
    def block(self, framework, obj, handle, device):
        if framework == "torch":  # with torch.cuda.stream(s): torch's default stream is handle 0
            before = _torch_current_stream(device)
            _torch_set_stream(
                obj if isinstance(obj, _TorchStream) else _TorchStream(0 if handle == 1 else handle, device)
            )
            try:
                yield
            finally:
                _torch_set_stream(before)
        elif framework == "tvm-ffi":
            original = ctypes.c_void_p()
            assert _tvm.TVMFFIEnvSetStream(DL_CUDA, device, handle, ctypes.byref(original)) == 0
            try:
                yield
            finally:
                assert _tvm.TVMFFIEnvSetStream(DL_CUDA, device, original, None) == 0
        else:  # with cupy.cuda.Device(device), stream:
            if isinstance(obj, _CupyStream):
                stream = obj
            elif handle in (0, 1):
                stream = _CupyStream.null
            elif handle == 2:
                stream = _CupyStream.ptds
            else:
                with _on_device(device):  # CuPy gives a stream made from a handle the current device
                    stream = _cupy_cuda.Stream.from_external(_Protocol(handle))
            with _on_device(device):
                stream.__enter__()
            try:
                yield
            finally:
                stream.__exit__(None, None, None)

    def current_device(self):
        return _current_device()

    def torch_object_is(self, obj, device):
        return _torch_current_stream(device) is obj

    def cupy_current_object(self, device):
        return _cupy_get_current_stream(device)


@pytest.fixture(scope="module")
def fw(streamlike):
    assert os.environ.get("STREAMLIKE_FAKE_CUDA_DEVICES") == "2", "the matrix needs the fake CUDA's two devices"
    where = os.environ.get("STREAMLIKE_BRIDGE_MODULES_DIR")
    if not where or not os.path.isdir(where):
        pytest.skip("the bridge suite's current-stream module was not built (the C++ scope's rows)")
    if where not in sys.path:
        sys.path.append(where)
    bridge = importlib.import_module("streamlike_current_nb_test")
    assert bridge.link_package()
    saved = {name: sys.modules.get(name) for name in ("torch", "cupy", "cupy.cuda")}
    sys.modules.update({"torch": _torch_module, "cupy": _cupy_module, "cupy.cuda": _cupy_cuda})
    providers = streamlike.current_stream_providers()
    assert providers[:3] == ["torch", "tvm-ffi", "cupy"], providers
    assert providers[-1] == "streamlike", providers
    yield FakeFrameworks(streamlike, bridge)
    for name, module in saved.items():
        if module is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = module


@pytest.mark.parametrize("case", matrix.CASES, ids=[c.id for c in matrix.CASES])
def test_matrix(fw, case):
    matrix.run_case(fw, case)


@pytest.mark.parametrize("kind", ["created", "torch", "cupy", "legacy"])
@pytest.mark.parametrize("device", [0, 1])
def test_a_use_block_left_on_another_thread(fw, kind, device):
    matrix.run_exit_on_another_thread(fw, kind, device)


def test_the_table_covers_every_dimension():
    # What the docs promise the matrix covers: a dimension dropped from the table fails here.
    cases = matrix.CASES
    assert {c.kind for c in cases} == set(matrix.KINDS)
    assert {c.setter for c in cases} == set(matrix.SETTERS)
    assert {(c.setter, c.inner) for c in cases if c.inner} == {(a, b) for a in matrix.SETTERS for b in matrix.SETTERS}
    assert {c.device for c in cases} == set(matrix.DEVICES)
    assert any(c.raises and c.inner for c in cases) and any(c.raises and not c.inner for c in cases)
    assert any(c.other_thread_looks for c in cases)
    assert any(c.refused for c in cases)


# --- The wrong-stream check, turned on by the environment ----------------------------------------
CHECK_VARIABLE = "STREAMLIKE_CHECK_CURRENT_STREAM"
CHECK_REPORT = "is not the current stream of device 0"


@pytest.mark.parametrize("setter", matrix.SETTERS)
def test_the_check_reports_a_stream_that_is_not_the_current_one(fw, setter, capfd):
    """Inside each setter's block a bound function given another stream is reported, given the
    current one is not. Checks only where the environment turned the check on: a process started
    by test_the_environment_turns_the_check_on."""
    if os.environ.get(CHECK_VARIABLE) != "1":
        pytest.skip(f"runs in a process started with {CHECK_VARIABLE}=1")
    assert fw.sl.current_stream_check_enabled(), f"{CHECK_VARIABLE}=1 did not turn the package's check on"
    assert fw.bridge.check_active(), f"{CHECK_VARIABLE}=1 did not reach the module's check sites"
    fw.sl.set_current_stream_check(True)  # on again: forgets the call sites reported by other rows
    current, current_handle, keep_current = fw.make("created", 0)
    other, other_handle, keep_other = fw.make("pool", 0)
    capfd.readouterr()

    def body():
        capfd.readouterr()  # the C++ scope's own stream argument, given before it is current, is reported
        assert fw.bridge.view_arg(current) == current_handle
        assert CHECK_REPORT not in capfd.readouterr().err, f"{setter}: the current stream was reported"
        assert fw.bridge.view_arg(other) == other_handle
        assert CHECK_REPORT in capfd.readouterr().err, f"{setter}: another stream was not reported"

    matrix._enter(fw, setter, current, current_handle, 0, [], body)


def test_the_environment_turns_the_check_on(fw):
    import subprocess

    assert not fw.sl.current_stream_check_enabled()  # off without the variable
    child = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k", "the_check_reports"],
        env={**os.environ, CHECK_VARIABLE: "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 0 and f"{len(matrix.SETTERS)} passed" in child.stdout, child.stdout + child.stderr


@pytest.mark.parametrize("what, declares, status", matrix.REGISTRATIONS, ids=[r[0] for r in matrix.REGISTRATIONS])
def test_a_framework_joining_from_c(fw, what, declares, status):
    matrix.run_registration(fw, declares, status)
