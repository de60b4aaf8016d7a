"""The streamlike package inside CUDA graph captures, and its graph, event and retain functions.

Inside torch.cuda.graph, CuPy's begin_capture, cuda.core's graph builder and streamlike.capture,
in the three capture modes, every package call either works (the facts the library answers
capture-safely, is_capturing, capture_info, record, wait within the capture, retain_until_done) or
raises before the capture is touched, naming the function and the rule. After each refused call
the capture is still active, and the graph replays with the right values.

Skipped as a whole without a GPU; each framework's tests skip without it.
"""

import gc
import pickle
import time
import weakref

import pytest
from capture_support import MODES, no_collection
from gpu_presence import skip_module_without_gpu

skip_module_without_gpu()

REPLAYS = 5
N = 1 << 16


@pytest.fixture(autouse=True)
def no_collection_during_captures():
    """A collection inside a global-mode capture freed an earlier test's CuPy graph
    (cudaGraphExecDestroy) and invalidated the capture under test; torch.cuda.graph collects before
    it captures for the same reason. Collections the tests ask for still run."""
    with no_collection():
        yield


class Payload:
    """An object to retain: its weakref callback tells when the last reference went."""


def watch(obj):
    fired = []
    return weakref.ref(obj, lambda _: fired.append(True)), fired


def wait_until(fired, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not fired and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.005)
    return bool(fired)


def still_active(sl, stream):
    info = sl.StreamView(stream).capture_info
    assert info.status == "active", info
    return info.id


def package_calls(sl, stream, side, earlier_exec=None):
    """Every package call a library may make on a stream it is handed inside someone's capture.
    `side` is a stream made before the capture (forked into it and joined back; it must outlive the
    capture). Returns the object retained (whose release the caller checks)."""
    view = sl.StreamView(stream)
    owner = sl.Stream(stream)
    capture_id = still_active(sl, stream)
    assert capture_id != 0
    # Work: the queries the library answers capture-safely.
    assert view.is_capturing and owner.is_capturing
    assert owner.capture_info == view.capture_info == ("active", capture_id)
    assert view.device >= 0 and owner.device == view.device
    assert isinstance(view.priority, int)
    assert "handle=" in repr(view) and "handle=" in repr(owner)
    event = view.record()
    assert "streamlike.Event" in repr(event)
    still_active(sl, stream)
    # A stream outside the capture joins it by waiting on the capturing stream, and is joined back.
    side.wait(view)
    assert side.capture_info.status == "active" and side.capture_info.id == capture_id
    view.wait(side)
    sl.wait(owner, view)  # the same stream: nothing to do
    still_active(sl, stream)
    payload = Payload()
    sl.retain_until_done(view, payload)
    still_active(sl, stream)
    # Refused by name, before any call that would invalidate the capture.
    refused = [
        ("sync", lambda: view.sync()),
        ("sync", lambda: owner.sync()),
        ("is_done", lambda: view.is_done()),
        ("is_done", lambda: owner.is_done()),
        ("id", lambda: sl.StreamView(stream).id),  # never read before: only cudaStreamGetId knows it
        ("flags", lambda: sl.StreamView(stream).flags),
        ("begin", lambda: sl.capture(view).__enter__()),  # a second capture on the same stream
    ]
    if earlier_exec is not None:
        refused += [("launch", lambda: earlier_exec.launch(view)), ("upload", lambda: earlier_exec.upload(view))]
    for name, call in refused:
        with pytest.raises(RuntimeError, match="capturing a CUDA graph") as info:
            call()
        assert name in str(info.value), (name, str(info.value))
        assert still_active(sl, stream) == capture_id, name
    return payload


def earlier_graph(sl, torch):
    """An executable graph made before the capture under test (for the launch refusals)."""
    s = sl.Stream.create()
    x = torch.zeros(4, device="cuda")
    torch.cuda.synchronize()
    with sl.capture(s) as g:
        with torch.cuda.stream(torch.cuda.ExternalStream(s.handle)):
            x.add_(1)
    return g.instantiate(), x


# --- torch.cuda.graph ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_package_calls_inside_torch_graph(sl, torch, mode):
    exec_before, _ = earlier_graph(sl, torch)
    side = sl.Stream.create()
    stream = sl.Stream.create()
    x = torch.zeros(N, device="cuda")
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=torch.cuda.ExternalStream(stream.handle), capture_error_mode=mode):
        x.add_(1)
        payload = package_calls(sl, stream, side, exec_before)
        x.add_(1)
    ref, fired = watch(payload)
    del payload
    assert not stream.is_capturing and stream.capture_info == ("none", 0)
    for _ in range(REPLAYS):
        g.replay()
    torch.cuda.synchronize()
    assert bool((x == 2.0 * REPLAYS).all())
    gc.collect()
    assert not fired  # the graph holds it
    del g
    torch.cuda.synchronize()
    assert wait_until(fired)


def test_a_stream_made_by_streamlike_is_read_before_and_inside_torch_capture(sl, torch):
    stream = sl.Stream.create()
    kept = (stream.device, stream.id, stream.flags, stream.priority)
    view = sl.StreamView(stream)
    view_kept = (view.device, view.id, view.flags, view.priority)
    g = torch.cuda.CUDAGraph()
    x = torch.zeros(8, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.graph(g, stream=torch.cuda.ExternalStream(stream.handle)):
        x.add_(3)
        during = (stream.device, stream.id, stream.flags, stream.priority)  # known: answered from the cache
        view_during = (view.device, view.id, view.flags, view.priority)
        still_active(sl, stream)
    assert during == kept and view_during == view_kept == kept
    g.replay()
    torch.cuda.synchronize()
    assert bool((x == 3.0).all())


# --- CuPy ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_package_calls_inside_cupy_capture(sl, torch, mode):
    cupy = pytest.importorskip("cupy")
    exec_before, _ = earlier_graph(sl, torch)
    side = sl.Stream.create()
    modes = {
        "global": "streamCaptureModeGlobal",
        "thread_local": "streamCaptureModeThreadLocal",
        "relaxed": "streamCaptureModeRelaxed",
    }
    cupy_mode = getattr(cupy.cuda.runtime, modes[mode], None)
    if cupy_mode is None:
        pytest.skip(f"this CuPy has no cupy.cuda.runtime.{modes[mode]}")
    s = cupy.cuda.Stream(non_blocking=True)
    a = cupy.zeros(N, dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    with s:
        s.begin_capture(mode=cupy_mode)
        try:
            a += 1
            package_calls(sl, s, side, exec_before)
            a += 1
        finally:
            g = s.end_capture()
    a.fill(0)
    cupy.cuda.Device().synchronize()
    for _ in range(REPLAYS):
        g.launch(s)
    s.synchronize()
    assert int((a == 2.0 * REPLAYS).sum()) == N


# --- cuda.core's graph builder -------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_package_calls_inside_cuda_core_graph_builder(sl, torch, mode):
    core = pytest.importorskip("cuda.core")
    exec_before, _ = earlier_graph(sl, torch)
    side = sl.Stream.create()
    device = core.Device(0)
    device.set_current()
    stream = device.create_stream()
    if not hasattr(stream, "create_graph_builder"):
        pytest.skip("this cuda.core has no Stream.create_graph_builder")
    x = torch.zeros(N, device="cuda")
    torch.cuda.synchronize()
    builder = stream.create_graph_builder()
    builder.begin_building(mode)
    try:
        with torch.cuda.stream(torch.cuda.ExternalStream(int(builder.stream.handle))):
            x.add_(1)
        package_calls(sl, builder.stream, side, exec_before)
        with torch.cuda.stream(torch.cuda.ExternalStream(int(builder.stream.handle))):
            x.add_(1)
    finally:
        builder.end_building()
    graph = builder.complete()
    for _ in range(REPLAYS):
        graph.launch(stream)
    stream.sync()
    assert bool((x == 2.0 * REPLAYS).all())


# --- streamlike.capture --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_streamlike_capture_gives_a_graph_that_replays(sl, torch, mode):
    exec_before, _ = earlier_graph(sl, torch)
    side = sl.Stream.create()
    stream = sl.Stream.create()
    x = torch.zeros(N, device="cuda")
    torch.cuda.synchronize()
    capture = sl.capture(stream, mode=mode)
    with capture as graph:
        assert not graph and "empty" in repr(graph) and "active" in repr(capture)
        with torch.cuda.stream(torch.cuda.ExternalStream(stream.handle)):
            x.add_(1)
        payload = package_calls(sl, stream, side, exec_before)
        with torch.cuda.stream(torch.cuda.ExternalStream(stream.handle)):
            x.add_(1)
    ref, fired = watch(payload)
    del payload
    assert graph and graph.node_count >= 2 and "nodes=" in repr(graph) and "ended" in repr(capture)
    assert not stream.is_capturing
    exec_graph = graph.instantiate()
    assert "streamlike.GraphExec" in repr(exec_graph)
    exec_graph.upload(stream)
    for _ in range(REPLAYS):
        exec_graph.launch(torch.cuda.ExternalStream(stream.handle))  # any stream object
    stream.sync()
    assert bool((x == 2.0 * REPLAYS).all())
    graph_ref, exec_ref = weakref.ref(graph), weakref.ref(exec_graph)
    for owner in (graph, exec_graph, capture):
        with pytest.raises(TypeError, match="cannot leave their process"):
            pickle.dumps(owner)
    del owner
    gc.collect()
    assert not fired  # the graph and the executable graph hold it
    del graph, exec_graph, capture
    gc.collect()
    assert graph_ref() is None and exec_ref() is None
    torch.cuda.synchronize()
    assert wait_until(fired)


def test_an_exception_in_the_block_ends_the_capture_and_passes_on(sl, torch):
    stream = sl.Stream.create()
    with pytest.raises(KeyError, match="inside"):
        with sl.capture(stream) as graph:
            assert stream.is_capturing
            raise KeyError("inside")
    assert not stream.is_capturing and not graph
    stream.sync()  # usable again


def test_an_invalidated_capture_is_reported_and_refused_calls_stay_refused(sl, torch):
    stream = sl.Stream.create()
    view = sl.StreamView(stream)
    with pytest.raises(RuntimeError, match="cudaErrorStreamCapture"):
        with sl.capture(stream, mode="relaxed"):
            # A call outside streamlike invalidates the capture (cudaStreamQuery).
            try:
                torch.cuda.ExternalStream(stream.handle).query()
            except Exception:  # torch reports the invalidation (RuntimeError or a subclass)
                pass
            assert view.capture_info.status == "invalidated" and view.is_capturing
            for call in (view.sync, view.is_done, stream.sync, stream.is_done):
                with pytest.raises(RuntimeError, match="capturing a CUDA graph"):
                    call()
            assert view.capture_info.status == "invalidated"
    assert not stream.is_capturing
    stream.sync()


def test_a_stream_pool_hands_out_streams_that_are_not_capturing(sl, torch):
    pool = sl.StreamPool(2)
    assert repr(pool) == f"<streamlike.StreamPool size=2 device={pool.device}>"
    with sl.capture(pool.at(0)):
        assert pool.at(0).is_capturing and not pool.at(1).is_capturing
        for _ in range(4):
            assert pool.get_non_capturing() == pool.at(1)


# --- Events --------------------------------------------------------------------------------------


def test_events_record_wait_sync_and_time_as_in_cpp(sl, torch):
    a, b = sl.Stream.create(), sl.Stream.create()
    start = sl.Event.create(timing=True)
    start.record(a)
    x = torch.ones(N, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(torch.cuda.ExternalStream(a.handle)):
        x.mul_(3)
    end = a.record(timing=True)
    b.wait(end)
    with torch.cuda.stream(torch.cuda.ExternalStream(b.handle)):
        x.add_(1)
    b.sync()
    assert bool((x == 4.0).all())
    end.sync()
    assert end.is_done() and start.elapsed_ms(end) >= 0.0 and sl.elapsed_ms(start, end) >= 0.0
    assert repr(end).startswith("<streamlike.Event handle=0x")
    ref = weakref.ref(end)
    with pytest.raises(TypeError, match="cannot leave their process"):
        pickle.dumps(end)
    del end
    assert ref() is None
    with pytest.raises(RuntimeError, match="cudaError"):
        a.record().elapsed_ms(start)  # not a timed event


def test_events_recorded_in_a_capture_refuse_host_waits_by_name(sl, torch):
    stream = sl.Stream.create()
    timed = sl.Event.create(timing=True)
    timed.record(stream)
    with sl.capture(stream) as graph:
        event = stream.record()
        for call in (event.sync, event.is_done, lambda: timed.elapsed_ms(event)):
            with pytest.raises(RuntimeError, match="captur"):
                call()
            assert stream.capture_info.status == "active"
    assert graph


def test_retain_until_done_on_a_running_stream_waits_for_the_queued_work(sl, torch):
    stream = sl.Stream.create()
    payload = Payload()
    ref, fired = watch(payload)
    with torch.cuda.stream(torch.cuda.ExternalStream(stream.handle)):
        torch.cuda._sleep(1_000_000_000)  # about half a second
    sl.retain_until_done(stream, payload)
    del payload
    gc.collect()
    assert ref() is not None and not fired
    stream.sync()
    assert wait_until(fired)
