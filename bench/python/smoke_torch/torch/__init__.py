"""A stand-in for torch, for the CPU smoke run of bench_current_stream.py only (bench-smoke): what
the benchmark calls, over the stand-in libtorch_cuda.so of test/fake_frameworks (found by
streamlike's torch provider as the real one is) and the preloaded fake CUDA. Its times say that
the benchmark runs and judges, nothing about torch."""

import contextlib
import ctypes
import os
import threading

__version__ = "stand-in"

_cuda_lib = ctypes.CDLL(os.environ["STREAMLIKE_FAKE_CUDA_LIBRARY"])
_shim = ctypes.CDLL(
    os.path.join(os.environ["STREAMLIKE_FAKE_FRAMEWORKS_DIR"], "libtorch_cuda.so"), mode=ctypes.RTLD_GLOBAL
)
_shim.aoti_torch_get_current_cuda_stream.argtypes = [ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)]
_shim.torch_set_current_cuda_stream.argtypes = [ctypes.c_void_p, ctypes.c_int32]
_objects = threading.local()


class _Cuda:
    class Stream:
        def __init__(self, device=None, handle=None):
            self.device_index = _Cuda.current_device() if device is None else device
            if handle is None:
                out = ctypes.c_void_p()
                assert _cuda_lib.cudaStreamCreate(ctypes.byref(out)) == 0
                handle = out.value
            self.cuda_stream = handle or 0

        def __cuda_stream__(self):
            return (0, self.cuda_stream)

        def __eq__(self, other):
            return isinstance(other, _Cuda.Stream) and other.cuda_stream == self.cuda_stream

        __hash__ = object.__hash__

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def current_device():
        d = ctypes.c_int(0)
        return d.value if _cuda_lib.cudaGetDevice(ctypes.byref(d)) == 0 else 0

    @staticmethod
    def set_stream(s):
        _shim.torch_set_current_cuda_stream(s.cuda_stream, s.device_index)
        _objects.__dict__[s.device_index] = s

    @staticmethod
    def current_stream(device=None):
        device = _Cuda.current_device() if device is None else device
        out = ctypes.c_void_p()
        _shim.aoti_torch_get_current_cuda_stream(device, ctypes.byref(out))
        obj = _objects.__dict__.get(device)
        return obj if obj is not None and obj.cuda_stream == (out.value or 0) else _Cuda.Stream(device, out.value or 0)

    @staticmethod
    @contextlib.contextmanager
    def stream(s):
        before = _Cuda.current_stream(s.device_index)
        _Cuda.set_stream(s)
        try:
            yield
        finally:
            _Cuda.set_stream(before)


cuda = _Cuda
