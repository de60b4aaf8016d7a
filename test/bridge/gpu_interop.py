"""The Python bridge against the real CUDA stream libraries: torch, CuPy, cuda.core, numba-cuda.

Skipped as a whole without a GPU; each library's tests skip when it is not installed. Run it on a
GPU machine after building (from the repository root):

    meson setup build-py -Dpython=enabled && meson compile -C build-py
    PYTHONPATH=build-py/test/bridge python3 -m pytest -v test/bridge/gpu_interop.py

(`meson test -C build-py --suite bridge` runs it too; it reports SKIP when nothing could run.)

What it checks, with both test modules (nanobind and pybind11):
  * a stream of each library passed to a C++ function taking stream_view / shared_stream: the
    handle C++ sees is the exporter's own handle, and a shared_stream keeps the exporter (and so
    its stream) alive after Python drops it;
  * a C++-created shared_stream returned to Python is consumed by torch.cuda.ExternalStream,
    cupy.cuda.ExternalStream / Stream.from_external, cuda.core's Device.create_stream(obj) and
    numba.cuda.external_stream, which all see the same handle, and cuda.core's wrapper keeps it
    alive;
  * work ordered across them runs in order: a torch op on the C++ stream, a C++ wait, a CuPy op
    reading the result (and a control showing that without the wait the race is observable), and
    a chain torch -> cuda.core stream (C++ memset) -> CuPy -> numba.
"""

import gc
import sys

import pytest
from conftest import import_bridge, module_names
from device_gate import Gate, let_unordered_work_run

# Skip the whole file without a GPU (asked through the test module: no library needed).
_first = import_bridge(module_names()[0])
if _first.cuda_device_count() == 0:
    pytest.skip("no CUDA device (or no driver)", allow_module_level=True)

N = 1 << 22  # int32 elements: 16 MiB, enough for a kernel to take a while


def as_int(handle):
    """A stream handle as an int, whatever the library wraps it in (ctypes, cuda.bindings)."""
    if isinstance(handle, int):
        return handle
    value = getattr(handle, "value", None)
    if isinstance(value, int):
        return value
    return int(handle)


def expected_handle(exported):
    """What C++ sees for an exported address: 0 (a library's null stream) is the legacy default."""
    return 1 if exported == 0 else exported


# --- numba-cuda, skipped when absent (torch, CuPy and cuda.core: conftest.py) ------------------


@pytest.fixture(scope="module")
def numba_cuda():
    pytest.importorskip("numba")
    from numba import cuda

    if not cuda.is_available():
        pytest.skip("numba-cuda sees no GPU")
    return cuda


def library_streams(name, torch=None, cupy=None, core=None, numba_cuda=None):
    """(a new stream of the library, its handle as the library reports it)."""
    if name == "torch":
        s = torch.cuda.Stream()
        return s, s.cuda_stream
    if name == "cupy":
        s = cupy.cuda.Stream(non_blocking=True)
        return s, s.ptr
    if name == "cuda.core":
        s = core.Device(0).create_stream()
        return s, as_int(s.handle)
    s = numba_cuda.stream()
    return s, as_int(s.handle)


LIBRARIES = ["torch", "cupy", "cuda.core", "numba"]


@pytest.fixture(params=LIBRARIES)
def foreign(request):
    """A fresh stream from each library, and the handle that library says it has."""
    name = request.param
    fixtures = {"torch": "torch", "cupy": "cupy", "cuda.core": "core", "numba": "numba_cuda"}
    lib = request.getfixturevalue(fixtures[name])
    stream, handle = library_streams(name, **{fixtures[name]: lib})
    return name, stream, handle


# --- foreign streams into C++ ----------------------------------------------------------------------


def test_foreign_stream_handle_seen_in_cpp(bridge, foreign):
    name, stream, handle = foreign
    assert stream.__cuda_stream__() == (0, handle)  # the library's protocol agrees with itself
    assert bridge.handle_of(stream) == handle
    assert bridge.handle_of_shared(stream) == handle
    assert bridge.handle_of_optional(stream) == handle


def test_foreign_stream_facts_cached_by_shared_stream(bridge, foreign):
    name, stream, handle = foreign
    assert bridge.stream_device(stream) == 0  # keep_alive queried the live stream's device


def test_library_default_streams(bridge, torch, cupy):
    # Their null streams export (0, 0): the legacy default stream.
    assert torch.cuda.default_stream().__cuda_stream__()[1] == 0
    assert bridge.handle_of(torch.cuda.default_stream()) == 1
    assert bridge.handle_of(cupy.cuda.Stream.null) == expected_handle(cupy.cuda.Stream.null.ptr)


def test_shared_stream_keeps_a_foreign_stream_alive(bridge, foreign):
    name, stream, handle = foreign
    base = sys.getrefcount(stream)
    bridge.hold(stream)
    assert sys.getrefcount(stream) == base + 1
    del stream
    gc.collect()
    # The library would destroy its stream with its last Python reference (CuPy, cuda.core,
    # numba do); C++ still holds one, so the handle must still name a live stream.
    bridge.sync_held(0)
    assert bridge.release_held() == 1


# --- C++ streams into the libraries ----------------------------------------------------------------


def test_cpp_stream_consumed_by_torch(bridge, torch):
    cs = bridge.create_stream()
    assert cs.owning and cs.use_count == 1
    ts = torch.cuda.ExternalStream(cs.handle)
    assert ts.cuda_stream == cs.handle
    assert bridge.handle_of(ts) == cs.handle  # and back through torch's own __cuda_stream__


def test_cpp_stream_consumed_by_cupy(bridge, cupy):
    cs = bridge.create_stream()
    assert cupy.cuda.ExternalStream(cs.handle).ptr == cs.handle
    if hasattr(cupy.cuda.Stream, "from_external"):  # CuPy's protocol consumer
        assert cupy.cuda.Stream.from_external(cs).ptr == cs.handle


def test_cpp_stream_consumed_by_cuda_core_which_keeps_it_alive(bridge, core):
    cs = bridge.create_stream()
    handle = cs.handle
    base = sys.getrefcount(cs)
    s = core.Device(0).create_stream(cs)
    assert as_int(s.handle) == handle
    assert sys.getrefcount(cs) == base + 1  # cuda.core holds our Stream, which owns the C++ stream
    del cs
    gc.collect()
    s.sync()  # still alive: cuda.core -> streamlike.Stream -> shared_stream
    assert bridge.handle_of(s) == handle


def test_cpp_stream_consumed_by_numba(bridge, numba_cuda):
    cs = bridge.create_stream()
    ns = numba_cuda.external_stream(cs.handle)
    assert as_int(ns.handle) == cs.handle
    assert bridge.handle_of(ns) == cs.handle


# --- work ordered across libraries ----------------------------------------------------------------


def cupy_view(cupy, tensor):
    """A CuPy array over a torch tensor's memory, without any implicit synchronization."""
    nbytes = tensor.numel() * tensor.element_size()
    memory = cupy.cuda.UnownedMemory(tensor.data_ptr(), nbytes, tensor)
    return cupy.ndarray((tensor.numel(),), dtype=cupy.int32, memptr=cupy.cuda.MemoryPointer(memory, 0))


def torch_fill_late(torch, cupy, cpp_stream, value):
    """A zeroed tensor, then on the C++ stream (through torch.cuda.ExternalStream): a closed gate,
    then a fill with `value`. Whoever reads it before the test opens the gate sees zeros, however
    slow the host. Returns the tensor and the gate (open it once the readers are queued)."""
    a = torch.zeros(N, dtype=torch.int32, device="cuda")
    a.fill_(0)  # loads torch's fill kernel before the gate holds the stream
    torch.cuda.synchronize()
    gate = Gate(cupy).close(cpp_stream.handle)
    with torch.cuda.stream(torch.cuda.ExternalStream(cpp_stream.handle)):
        a.fill_(value)
    return a, gate


def cupy_sum_queued(cupy, tensor, stream):
    """Queues the sum on `stream`; returns the device scalar (read it with .get(stream=stream))."""
    with stream:
        return cupy_view(cupy, tensor).sum(dtype=cupy.int64)


def cupy_sum_on(cupy, tensor, stream):
    with stream:
        total = cupy_view(cupy, tensor).sum(dtype=cupy.int64)
        result = int(total.get(stream=stream))
    stream.synchronize()
    return result


def test_torch_then_cpp_wait_then_cupy(bridge, torch, cupy):
    cps = cupy.cuda.Stream(non_blocking=True)
    warm = torch.ones(N, dtype=torch.int32, device="cuda")
    assert cupy_sum_on(cupy, warm, cps) == N  # CuPy compiles its kernel now, not behind the gate
    cs = bridge.create_stream()
    a, gate = torch_fill_late(torch, cupy, cs, 7)
    with gate:
        bridge.wait(cps, cs)  # C++: the CuPy stream waits for the torch work queued on the C++ stream
        total = cupy_sum_queued(cupy, a, cps)
        done = cupy.cuda.Event()
        done.record(cps)
        assert not let_unordered_work_run(lambda: done.done), "the CuPy sum ran while the torch fill was held"
    assert int(total.get(stream=cps)) == 7 * N
    bridge.sync(cs)
    assert not gate.timed_out


def test_without_the_wait_the_race_is_visible(bridge, torch, cupy):
    # The control for the test above: the same work with no wait reads the zeros, so a passing
    # ordered test means the wait did its job.
    cps = cupy.cuda.Stream(non_blocking=True)
    warm = torch.ones(N, dtype=torch.int32, device="cuda")
    assert cupy_sum_on(cupy, warm, cps) == N  # CuPy compiles its kernel now, not during the race
    cs = bridge.create_stream()
    a, gate = torch_fill_late(torch, cupy, cs, 7)
    with gate:  # the fill is held while the unordered sum runs: it must read zeros
        early = cupy_sum_on(cupy, a, cps)
    bridge.sync(cs)
    assert not gate.timed_out
    assert early == 0


def test_chain_across_all_four(bridge, torch, cupy, core, numba_cuda):
    # torch fills on the C++ stream; a cuda.core stream waits and C++ overwrites every byte with
    # 0x01 on it; a CuPy stream waits and sums; a numba stream waits and copies to the host.
    cps = cupy.cuda.Stream(non_blocking=True)
    warm = torch.ones(N, dtype=torch.int32, device="cuda")
    assert cupy_sum_on(cupy, warm, cps) == N  # CuPy compiles its kernel now, not behind the gate
    cs = bridge.create_stream()
    a, gate = torch_fill_late(torch, cupy, cs, 5)
    with gate:
        ccs = core.Device(0).create_stream()
        bridge.wait(ccs, cs)
        bridge.memset_async(a.data_ptr(), 0x01, N * 4, ccs)
        bridge.wait(cps, ccs)
        total = cupy_sum_queued(cupy, a, cps)
        done = cupy.cuda.Event()
        done.record(cps)
        assert not let_unordered_work_run(lambda: done.done), "the chain ran while the torch fill was held"
    assert int(total.get(stream=cps)) == 0x01010101 * N
    assert not gate.timed_out
    ns = numba_cuda.stream()
    bridge.wait(ns, cps)
    host = numba_cuda.as_cuda_array(a, sync=False).copy_to_host(stream=ns)
    ns.synchronize()
    assert (host == 0x01010101).all()
    assert bridge.is_done(cs) and bridge.is_done(ccs)
