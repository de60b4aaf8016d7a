"""The streamlike package with a GPU: streams of torch, CuPy, cuda.core and numba-cuda read by
StreamView and Stream, a Stream consumed by each of them, and a Stream kept alive by C++ after
Python dropped it. Each test skips without a GPU or without its framework."""

import gc

import pytest
from gpu_presence import skip_module_without_gpu

skip_module_without_gpu()


def torch_or_skip():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    return torch


def fill_and_check(torch, stream_handle):
    """Queues work on the stream through torch.cuda.ExternalStream and checks its result."""
    ext = torch.cuda.ExternalStream(stream_handle)
    with torch.cuda.stream(ext):
        x = torch.full((1 << 20,), 3.0, device="cuda")
        y = (x * 2).sum()
    ext.synchronize()
    assert y.item() == 6.0 * (1 << 20)


# --- Reading other libraries' streams -----------------------------------------------------------


def test_torch_stream(sl):
    torch = torch_or_skip()
    s = torch.cuda.Stream(priority=-1)
    view = sl.StreamView(s)
    assert view.handle == s.cuda_stream and view.source == "torch" and view.exporter is s
    assert view.device == 0 and view.priority == s.priority and view.id > 0
    assert not view.is_default and not view.is_capturing
    owned = sl.Stream(s)
    assert owned.handle == s.cuda_stream and owned.owning and owned.device == 0
    with torch.cuda.stream(s):
        x = torch.ones(1 << 20, device="cuda")
    view.sync()
    assert view.is_done() and x.sum().item() == 1 << 20


def test_torch_default_stream_is_a_default_stream(sl):
    torch = torch_or_skip()
    view = sl.StreamView(torch.cuda.default_stream())
    assert view.is_default and view.device == 0


def test_cupy_stream(sl):
    cupy = pytest.importorskip("cupy")
    s = cupy.cuda.Stream(non_blocking=True)
    view = sl.StreamView(s)
    assert view.handle == s.ptr and view.source == "protocol" and view.exporter is s
    assert view.flags == 1 and view.device == 0
    owned = sl.Stream(s)
    with s:
        a = cupy.arange(1000)
    owned.sync()
    assert int(a.sum()) == 499500


def test_cuda_core_stream(sl):
    core = pytest.importorskip("cuda.core")
    dev = core.Device()
    dev.set_current()
    s = dev.create_stream()
    view = sl.StreamView(s)
    assert view.handle == int(s.handle) and view.source == "protocol" and view.device == dev.device_id
    assert sl.Stream(s).handle == int(s.handle)


def test_numba_stream(sl):
    numba_cuda = pytest.importorskip("numba.cuda")
    s = numba_cuda.stream()
    view = sl.StreamView(s)
    handle = getattr(s.handle, "value", None) or int(s.handle)  # ctypes (numba) or CUstream (numba-cuda)
    assert view.handle == handle and view.device == 0
    d = numba_cuda.to_device(list(range(100)), stream=s)
    view.sync()
    assert sum(d.copy_to_host()) == 4950


# --- The reverse: a Stream used by each library --------------------------------------------------


def test_a_stream_is_used_by_torch(sl):
    torch = torch_or_skip()
    stream = sl.Stream.create(priority=0)
    fill_and_check(torch, stream.handle)
    assert stream.is_done()


def test_a_stream_is_used_by_cupy(sl):
    cupy = pytest.importorskip("cupy")
    stream = sl.Stream.create()
    with cupy.cuda.ExternalStream(stream.handle):
        a = cupy.arange(1000)
    stream.sync()
    assert int(a.sum()) == 499500


def test_a_stream_is_used_by_cuda_core(sl):
    core = pytest.importorskip("cuda.core")
    dev = core.Device()
    dev.set_current()
    stream = sl.Stream.create()
    theirs = dev.create_stream(stream)  # through __cuda_stream__
    assert int(theirs.handle) == stream.handle
    ev = theirs.record()
    ev.sync()


def test_a_stream_is_used_by_numba(sl):
    numba_cuda = pytest.importorskip("numba.cuda")
    stream = sl.Stream.create()
    s = numba_cuda.external_stream(stream.handle)
    d = numba_cuda.to_device(list(range(100)), stream=s)
    stream.sync()
    assert sum(d.copy_to_host()) == 4950


# --- Stream operations ---------------------------------------------------------------------------


def test_stream_facts_operations_and_events(sl):
    torch = torch_or_skip()
    stream = sl.Stream.create(device=0, priority=-1, non_blocking=False)
    assert stream.device == 0 and stream.priority == -1 and stream.flags == 0 and stream.owning
    assert stream.source == "created" and stream.exporter is None
    other = sl.Stream.create()
    start = stream.record(timing=True)
    fill_and_check(torch, stream.handle)
    end = stream.record(timing=True)
    other.wait(stream)
    other.wait(end)
    sl.wait(other, stream)
    end.sync()
    assert end.is_done() and start.elapsed_ms(end) >= 0.0
    with pytest.raises(RuntimeError, match="cudaError"):
        stream.record().elapsed_ms(end)  # not a timed event
    with pytest.raises(ValueError):
        sl.Stream.create(priority=10**5)  # outside the device's range


def test_facts_are_capture_safe(sl):
    torch = torch_or_skip()
    s = torch.cuda.Stream()
    before = sl.StreamView(s)
    kept = (before.device, before.id, before.priority, before.flags)  # read now, kept
    fresh = sl.StreamView(s)
    g = torch.cuda.CUDAGraph()
    x = torch.zeros(16, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.graph(g, stream=s):
        x += 1
        capturing = fresh.is_capturing
        during = (before.device, before.id, before.priority, before.flags)
        device, priority = fresh.device, fresh.priority  # read without invalidating the capture
        with pytest.raises(RuntimeError, match="capturing a CUDA graph") as refused:
            _ = fresh.id  # only cudaStreamGetId knows it, and it would invalidate the capture
        x += 1
    assert capturing and not fresh.is_capturing
    assert during == kept and device == kept[0] and priority == kept[2]
    assert "before the capture begins" in str(refused.value)
    g.replay()  # the capture was not invalidated
    torch.cuda.synchronize()
    assert x[0].item() == 2.0
    assert fresh.id == kept[1]  # after the capture: read and kept


def test_stream_pool(sl):
    pool = sl.StreamPool(4)
    streams = [pool.get() for _ in range(8)]
    assert len(pool) == 4 and pool.device == 0
    assert streams[0] == streams[4] and streams[0] != streams[1]
    assert all(type(s) is sl.Stream and s.owning for s in streams)
    del pool
    streams[0].sync()  # the streams outlive the pool


# --- Kept alive by C++ ---------------------------------------------------------------------------


def test_a_stream_is_kept_alive_by_cpp_after_python_dropped_it(sl, bridge_modules):
    torch = torch_or_skip()
    nb, pb = bridge_modules
    nb.release_held()
    stream = sl.Stream.create()
    handle, sid = stream.handle, stream.id
    nb.hold(stream)  # a C++ shared_stream sharing the owner
    assert stream.use_count == 2
    del stream
    gc.collect()
    assert nb.held_use_count(0) == 1  # C++ alone keeps it
    fill_and_check(torch, handle)  # still a live stream
    nb.sync_held(0)
    assert sl.StreamView(sl.from_address(handle)).id == sid  # the same stream, not a reused handle
    nb.release_held()  # destroyed now


def test_an_owning_reference_reaches_cpp_without_keeping_python_objects(sl, bridge_modules):
    torch = torch_or_skip()
    nb, pb = bridge_modules
    nb.release_held()

    class OffersOwned:
        def __init__(self, stream):
            self.stream = stream

        def __cuda_stream_owned__(self):
            return self.stream.__cuda_stream_owned__()

    stream = sl.Stream.create()
    handle = stream.handle
    offer = OffersOwned(stream)
    nb.hold(offer)  # a shared_stream parameter takes the capsule
    import weakref

    alive = weakref.ref(offer)
    del offer, stream
    gc.collect()
    assert alive() is None  # C++ holds the stream, not the Python object
    assert nb.held_use_count(0) == 1
    fill_and_check(torch, handle)
    nb.release_held()


def test_a_cpp_stream_reaches_python_as_the_package_type(sl, bridge_modules):
    torch = torch_or_skip()
    nb, pb = bridge_modules
    for module in (nb, pb):
        made = module.create_stream()
        assert type(made) is sl.Stream and made.owning
        fill_and_check(torch, made.handle)
        assert sl.StreamView(made).device == 0


def test_a_cython_module_keeps_a_stream_alive_and_hands_it_back(sl, cython_holder):
    torch = torch_or_skip()
    stream = sl.Stream.create()
    handle, sid = stream.handle, stream.id
    holder = cython_holder.Holder(stream)  # an owning reference, through the installed .pxd
    assert holder.handle == handle and stream.use_count == 2
    del stream
    gc.collect()
    fill_and_check(torch, handle)  # Cython alone keeps the stream alive
    assert sl.StreamView(sl.from_address(handle)).id == sid  # the same stream, not a reused handle
    back = sl.Stream(holder)  # the package takes the reference over from Cython
    assert back.source == "owned-capsule" and holder.handle is None
    assert back.handle == handle and back.id == sid and back.use_count == 1
    fill_and_check(torch, back.handle)
    back.sync()
    assert back.is_done()


# --- Two devices (skipped on a machine with one) --------------------------------------------------


def test_streams_of_a_second_device_report_it_and_order_across_devices(sl):
    torch = torch_or_skip()
    if torch.cuda.device_count() < 2:
        pytest.skip(f"needs two CUDA devices; torch sees {torch.cuda.device_count()}")
    torch.cuda.set_device(0)
    s1 = sl.Stream.create(device=1)
    assert s1.device == 1 and sl.StreamView(s1).device == 1
    assert torch.cuda.current_device() == 0  # creating on device 1 left the current device alone
    pool = sl.StreamPool(2, device=1)
    assert pool.device == 1 and pool.get().device == 1
    torch_side = torch.cuda.Stream(device=1)
    view = sl.StreamView(torch_side)
    assert view.source == "torch" and view.device == 1 and view.handle == torch_side.cuda_stream

    s0 = sl.Stream.create(device=0)
    with torch.cuda.device(1):
        with torch.cuda.stream(torch.cuda.ExternalStream(s1.handle, device=torch.device("cuda", 1))):
            torch.cuda._sleep(1_000_000_000)  # about 0.5 s on device 1
    sl.wait(s0, s1)  # s0 (device 0) waits for what is queued on s1 (device 1)
    s0.sync()
    assert s1.is_done()  # without the wait, s0 would be done while s1 still sleeps
    assert torch.cuda.current_device() == 0
