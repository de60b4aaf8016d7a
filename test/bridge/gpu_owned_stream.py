"""The owning exchange on a GPU (docs/owned-stream-abi.md): a stream created in C++ (the nanobind
test module), handed through the "cuda_stream_owned" capsule to the other module's shared_stream
(pybind11), used by torch, CuPy and cuda.core through __cuda_stream__, then kept alive by C++ alone
after Python dropped every stream object; the work done on it is checked.

Skipped without a GPU, and without torch; CuPy and cuda.core steps are skipped one by one when
absent. Run: PYTHONPATH=BUILD/test/bridge python3 -m pytest -v test/bridge/gpu_owned_stream.py
"""

import gc

import pytest
from conftest import owned_module_pairs
from device_gate import Gate

N = 1 << 22  # int32 elements

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device for torch", allow_module_level=True)


def as_int(handle):
    if isinstance(handle, int):
        return handle
    value = getattr(handle, "value", None)
    return value if isinstance(value, int) else int(handle)


@pytest.mark.parametrize("pair", owned_module_pairs(), ids=lambda p: f"{p[0].binding}-to-{p[1].binding}")
def test_cpp_stream_through_the_capsule_used_by_torch_cupy_cuda_core_then_kept_by_cpp(pair):
    producer, consumer = pair
    s = producer.make_stream()  # shared_stream::create() in C++
    handle = s.handle
    consumer.hold(s)  # __cuda_stream_owned__: the consumer owns a reference, no Python object
    assert consumer.held_handle() == handle
    assert s.use_count == 2  # the producer's block: its Stream and the struct the consumer holds

    # torch, through the protocol's address.
    version, address = s.__cuda_stream__()
    assert (version, address) == (0, handle)
    a = torch.zeros(N, dtype=torch.int32, device="cuda")
    a.fill_(0)  # loads torch's fill kernel before the gate holds the stream
    torch.cuda.synchronize()
    ts = torch.cuda.ExternalStream(address)
    try:
        import cupy
    except ImportError:
        cupy = None
    # The stream held by a gate (device_gate.py, CuPy's kernel) until torch's and CuPy's work is
    # queued: whoever is not ordered after the fill reads zeros, however slow the host.
    gate = None
    if cupy is not None:
        warm = cupy.zeros(4, dtype=cupy.int32)
        warm += 1  # loads CuPy's kernel before the gate holds the stream
        cupy.cuda.Device().synchronize()
        gate = Gate(cupy).close(handle)
    with torch.cuda.stream(ts):
        a.fill_(3)
    expected_value = 3

    if cupy is not None and hasattr(cupy.cuda.Stream, "from_external"):
        cps = cupy.cuda.Stream.from_external(s)  # CuPy's __cuda_stream__ consumer
        assert cps.ptr == handle
        memory = cupy.cuda.UnownedMemory(a.data_ptr(), N * 4, a)
        view = cupy.ndarray((N,), dtype=cupy.int32, memptr=cupy.cuda.MemoryPointer(memory, 0))
        with cps:
            view += 1  # same stream: after torch's fill
        expected_value = 4
        del cps, view, memory
    if gate is not None:
        gate.open()

    try:
        from cuda import core
    except ImportError:
        core = None
    if core is not None:
        device = core.Device(0)
        device.set_current()
        cs = device.create_stream(s)  # cuda.core's __cuda_stream__ consumer, keeps `s` alive
        assert as_int(cs.handle) == handle
        event = cs.record()
        event.sync()  # the work so far, seen from cuda.core
        del cs, event

    # Python lets go of every stream object; C++ alone keeps the stream.
    del s, ts
    gc.collect()
    assert consumer.held_use_count() == 1
    assert consumer.held_handle() == handle
    # C++ works on it: reads the tensor on the held stream (ordered after torch and CuPy).
    assert consumer.held_sum_bytes(a.data_ptr(), N * 4) == expected_value * N
    consumer.held_memset(a.data_ptr(), 0, N * 4)
    assert consumer.held_sum_bytes(a.data_ptr(), N * 4) == 0
    # The last reference drops on a C++ thread while this thread keeps the GIL: the stream is
    # destroyed without Python.
    assert consumer.drop_held_on_thread_keeping_gil(5.0) is True
    torch.cuda.synchronize()
    del a  # freed now, so compute-sanitizer's leak check (torch's cache off) sees nothing left
