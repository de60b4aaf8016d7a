"""The GPU twin of pytest_sample/: under `pytest --streamcheck` on a device, the real checker reports
a memset on the legacy default stream inside torch.cuda.stream(s), and fails that test only. Skips
(the whole module) without torch or a CUDA device."""

import ctypes

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

N = 1 << 16
cuda = ctypes.CDLL("libcuda.so.1")
cuda.cuMemsetD32Async.argtypes = [ctypes.c_uint64, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p]
# Each test makes a driver memset of a tensor's words itself, as a C library handed a stream (or not)
# makes it: the report names the line of the call.


def test_clean():
    x = torch.zeros(N, dtype=torch.int32, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        stream = torch.cuda.current_stream().cuda_stream
        assert cuda.cuMemsetD32Async(x.data_ptr(), 7, x.numel(), stream) == 0
        y = x + 1
    torch.cuda.synchronize()
    assert int(y.sum()) == 8 * N


def test_buggy():
    x = torch.zeros(N, dtype=torch.int32, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        code = cuda.cuMemsetD32Async(x.data_ptr(), 7, x.numel(), None)  # the bug: the legacy default stream, not s
    assert code == 0
    torch.cuda.synchronize()
