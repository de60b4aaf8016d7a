"""The package's Event under CUDA graph captures, in each capture mode (global, thread_local,
relaxed): torch.cuda.graph, CuPy's begin_capture/end_capture, and streamlike.capture.

What it checks (docs/cuda-graphs.md, "Events under capture"):
  * an Event recorded on the capturing stream (StreamView.record, Stream.record) refuses sync(),
    is_done() and elapsed_ms() by name, the capture still active, and the graph replays the work
    captured around the calls with the right values;
  * Stream.wait(event), StreamView.wait(event) and streamlike.wait(stream, event) of an event
    recorded before the capture (or in another one) are refused by name ("outside that capture")
    instead of invalidating the capture; wait_external (method and function) makes the external
    wait instead, and the graph waits, at each launch, for the event's latest record (held back
    by a kernel spinning on a host-mapped flag, not by sleeping); fork and join through events of
    the capture work;
  * an Event recorded before a streamlike.capture in global or thread_local mode refuses sync() and
    is_done() by name inside the block (on another thread too, in global mode); in relaxed mode
    CUDA allows them and they work; after the block they work in every mode;
  * after the capture, an event recorded in it is still refused (CUDA answers cudaErrorCapturedEvent).

Each test skips without a GPU or without its framework. The package is installed by conftest.py.
"""

import os
import threading

import pytest
from capture_support import MODES, cupy_mode, no_collection
from gpu_presence import skip_module_without_gpu

REPLAYS = 10


skip_module_without_gpu()


@pytest.fixture(autouse=True)
def no_collection_inside_captures():
    with no_collection():
        yield


IN_CAPTURE = r"last recorded in a CUDA graph capture"


def refuse_recorded_event_calls(view):
    """The calls on events recorded on the capturing stream `view`: each refused by name."""
    e = view.record()
    with pytest.raises(RuntimeError, match=r"event::sync.*" + IN_CAPTURE):
        e.sync()
    assert view.is_capturing
    with pytest.raises(RuntimeError, match=r"event::is_done.*" + IN_CAPTURE):
        e.is_done()
    start = view.record(timing=True)
    end = view.record(timing=True)
    with pytest.raises(RuntimeError, match=r"event::elapsed_ms.*" + IN_CAPTURE):
        start.elapsed_ms(end)
    assert view.is_capturing
    return e


# --- torch.cuda.graph -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_torch_event_recorded_in_capture_refuses_by_name(sl, torch, mode):
    x = torch.zeros(16, dtype=torch.int32, device="cuda")
    x.add_(1)  # warm up outside the capture
    x.zero_()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, capture_error_mode=mode):
        view = sl.StreamView(torch.cuda.current_stream())
        x.add_(1)
        recorded = refuse_recorded_event_calls(view)
        x.add_(2)
    x.zero_()
    torch.cuda.synchronize()
    for _ in range(REPLAYS):
        g.replay()
    torch.cuda.synchronize()
    assert bool((x == 3 * REPLAYS).all())
    with pytest.raises(RuntimeError, match=r"event::sync.*" + IN_CAPTURE):
        recorded.sync()  # after the capture too (CUDA: cudaErrorCapturedEvent)


@pytest.mark.parametrize("mode", MODES)
def test_torch_wait_on_event_before_capture_refused_fork_join_work(sl, torch, mode):
    x = torch.zeros(16, dtype=torch.int32, device="cuda")
    y = torch.zeros(16, dtype=torch.int32, device="cuda")
    side = sl.Stream.create()
    torch_side = torch.cuda.ExternalStream(side.handle)
    x.add_(1)
    with torch.cuda.stream(torch_side):
        y.add_(1)
    torch.cuda.synchronize()
    x.zero_()
    y.zero_()
    before = sl.StreamView(torch.cuda.current_stream()).record()  # outside any capture
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, capture_error_mode=mode):
        main = sl.Stream(torch.cuda.current_stream())
        x.add_(1)
        with pytest.raises(RuntimeError, match=r"wait\(stream, event\).*outside that capture"):
            main.wait(before)
        assert main.capture_info.status == "active"
        main.wait_external(before)  # the explicit choice: an event-wait node (the event is complete)
        assert main.capture_info.status == "active"
        side.wait(main.record())  # fork: the side stream joins the capture
        assert side.is_capturing
        with torch.cuda.stream(torch_side):
            y.add_(10)
        main.wait(side.record())  # join
        x.add_(2)
    assert not side.is_capturing
    torch.cuda.synchronize()
    for _ in range(REPLAYS):
        g.replay()
    torch.cuda.synchronize()
    assert bool((x == 3 * REPLAYS).all())
    assert bool((y == 10 * REPLAYS).all())


# --- CuPy's begin_capture / end_capture -------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_cupy_event_recorded_in_capture_refuses_by_name(sl, cupy, mode):
    s = cupy.cuda.Stream(non_blocking=True)
    a = cupy.zeros(16, dtype=cupy.int32)
    with s:
        a += 1  # warm up outside the capture (kernel loading)
        a.fill(0)
    s.synchronize()
    with s:
        s.begin_capture(mode=cupy_mode(cupy, mode))
        try:
            a += 1
            recorded = refuse_recorded_event_calls(sl.StreamView(s))
            assert s.is_capturing()
            a += 2
        finally:
            g = s.end_capture()
    for _ in range(REPLAYS):
        g.launch(s)
    s.synchronize()
    assert int((a == 3 * REPLAYS).sum()) == 16
    with pytest.raises(RuntimeError, match=r"event::is_done.*" + IN_CAPTURE):
        recorded.is_done()


@pytest.mark.parametrize("mode", MODES)
def test_cupy_wait_on_event_before_capture_refused(sl, cupy, mode):
    s = cupy.cuda.Stream(non_blocking=True)
    a = cupy.zeros(16, dtype=cupy.int32)
    with s:
        a += 1
        a.fill(0)
    s.synchronize()
    other = sl.Stream.create()
    before = other.record()  # outside any capture
    with s:
        s.begin_capture(mode=cupy_mode(cupy, mode))
        try:
            a += 1
            view = sl.StreamView(s)
            with pytest.raises(RuntimeError, match=r"wait\(stream, event\).*outside that capture"):
                view.wait(before)
            assert s.is_capturing() and view.capture_info.status == "active"
            with pytest.raises(RuntimeError, match=r"wait\(stream, event\).*outside that capture"):
                sl.wait(s, before)
            assert view.capture_info.status == "active"
            sl.wait_external(s, before)  # the explicit choice: an event-wait node (the event is complete)
            assert view.capture_info.status == "active"
            view.wait(view.record())  # an event of the same capture
            a += 2
        finally:
            g = s.end_capture()
    for _ in range(REPLAYS):
        g.launch(s)
    s.synchronize()
    assert int((a == 3 * REPLAYS).sum()) == 16
    before.sync()  # recorded outside any capture: an ordinary event
    assert before.is_done()


# --- streamlike.capture ------------------------------------------------------------------------------
#
# The work is CuPy RawKernels (no allocation inside a capture): `add` (a[i] += v), `broadcast`
# (out[i] = value[0]) and the gate (`streamlike_test_gate`), which spins on the device until the
# host sets a flag in pinned host memory (or gives up after 10 s and says so), so a stream is held
# back for as long as a check needs without any sleep.

# The gate is the tests' one gate kernel (test/gpu/gate_kernel.cuh); add and broadcast are this file's.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu", "gate_kernel.cuh")) as _gate:
    KERNELS = (
        _gate.read()
        + r"""
extern "C" __global__ void add(int* a, int n, int v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += v;
}
extern "C" __global__ void broadcast(int* out, int n, const int* value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = *value;
}
"""
    )
SMALL = 256


class Kernels:
    """The kernels above, launched on streamlike streams through CuPy. Each kernel is loaded by a
    first launch before any test closes a gate or begins a capture (CUDA loads kernels lazily, and
    a first launch behind a held stream, or inside a capture, must not be what loads it), and each
    stream's CuPy ExternalStream is made before its capture begins (prepare): only launches and the
    library's calls happen inside a capture."""

    def __init__(self, sl, cupy):
        import numpy

        self.cupy, self.numpy = cupy, numpy
        self._streams = {}
        module = cupy.RawModule(code=KERNELS)
        self._gate, self._add, self._broadcast = (
            module.get_function(n) for n in ("streamlike_test_gate", "add", "broadcast")
        )
        # Pinned host memory: under unified addressing (every 64-bit CUDA device) the device reads
        # and writes it at the same address.
        self.memory = cupy.cuda.alloc_pinned_memory(4 * 4)
        self.state = numpy.frombuffer(self.memory, dtype=numpy.int32, count=4)
        loader = sl.Stream.create()
        self.prepare(loader)
        scratch = cupy.zeros(SMALL, dtype=cupy.int32)
        cupy.cuda.Device().synchronize()
        self.state[:] = 0
        self.state[0] = 1  # open: the gate's kernel returns at once
        self.close_gate(loader)
        self.add(loader, scratch, 1)
        self.broadcast(loader, scratch, scratch)
        loader.sync()
        self.reset_gate()

    def prepare(self, *streams):
        for stream in streams:
            if stream.handle not in self._streams:
                self._streams[stream.handle] = (stream, self.cupy.cuda.ExternalStream(stream.handle))

    def _on(self, stream, kernel, grid, args):
        with self._streams[stream.handle][1]:
            kernel(grid, (128,), args)

    def add(self, stream, a, v):
        self._on(stream, self._add, ((a.size + 127) // 128,), (a, self.numpy.int32(a.size), self.numpy.int32(v)))

    def broadcast(self, stream, out, value):
        self._on(stream, self._broadcast, ((out.size + 127) // 128,), (out, self.numpy.int32(out.size), value))

    def close_gate(self, stream, timeout_s=10):
        """Holds `stream` back until open_gate() (or the timeout)."""
        with self._streams[stream.handle][1]:
            self._gate((1,), (1,), (self.numpy.uint64(self.memory.ptr), self.numpy.uint64(timeout_s * 10**9)))

    def open_gate(self):
        self.state[0] = 1

    def reset_gate(self):
        """Once the gate's kernel has ended: checks it was opened, not timed out, and closes it
        again for the next close_gate()."""
        assert self.state[3] == 1, "the gate's kernel has not ended"
        assert self.state[1] == 0, "the gate opened by its timeout, not by open_gate(): the held work never ran"
        self.state[:] = 0


@pytest.fixture(scope="module")
def kernels(sl, cupy):
    return Kernels(sl, cupy)


def active(stream):
    info = stream.capture_info
    assert info.status == "active", info
    return info.id


OUTSIDE = r"streamlike::wait\(stream, event\).*outside that capture"


@pytest.mark.parametrize("mode", MODES)
def test_streamlike_capture_refuses_waits_on_outside_events_and_waits_externally(sl, cupy, kernels, mode):
    stream, producer = sl.Stream.create(), sl.Stream.create()
    kernels.prepare(stream, producer)
    a = cupy.zeros(SMALL, dtype=cupy.int32)
    scratch = cupy.zeros(SMALL, dtype=cupy.int32)
    cupy.cuda.Device().synchronize()
    before = producer.record()  # outside any capture
    made = sl.Event.create()
    made.record(producer)
    with sl.capture(producer):  # an event of another capture, over by now
        earlier_id = active(producer)
        kernels.add(producer, scratch, 1)
        in_earlier = producer.record()
    producer.sync()
    with sl.capture(stream, mode=mode) as graph:
        kernels.add(stream, a, 1)
        capture_id = active(stream)
        refused = [
            ("Stream.wait", lambda: stream.wait(before), "outside any capture"),
            ("StreamView.wait", lambda: sl.StreamView(stream).wait(made), "outside any capture"),
            ("wait(stream, event)", lambda: sl.wait(stream, before), "outside any capture"),
            ("wait(view, event)", lambda: sl.wait(sl.StreamView(stream), made), "outside any capture"),
            ("another capture's event", lambda: stream.wait(in_earlier), f"in capture {earlier_id})"),
        ]
        for name, call, where in refused:
            with pytest.raises(RuntimeError, match=OUTSIDE) as info:
                call()
            assert where in str(info.value) and "wait_external" in str(info.value), (name, str(info.value))
            assert active(stream) == capture_id, name
        # The explicit external waits: event-wait nodes (the events are complete: nothing held).
        stream.wait_external(before)
        sl.StreamView(stream).wait_external(made)
        sl.wait_external(stream, before)
        assert active(stream) == capture_id
        kernels.add(stream, a, 2)
    assert not stream.is_capturing
    assert graph.node_count == 5  # two kernels, three event-wait nodes; the refused waits added none
    exec_graph = graph.instantiate()
    for _ in range(REPLAYS):
        exec_graph.launch(stream)
    stream.sync()
    assert int((a == 3 * REPLAYS).sum()) == SMALL
    before.sync()  # recorded outside any capture: ordinary events
    assert before.is_done() and made.is_done()


@pytest.mark.parametrize("how", ["Stream.wait_external", "StreamView.wait_external", "wait_external"])
@pytest.mark.parametrize("mode", MODES)
def test_an_external_wait_in_streamlike_capture_waits_at_each_launch_for_the_latest_record(
    sl, cupy, kernels, mode, how
):
    stream, producer = sl.Stream.create(), sl.Stream.create()
    kernels.prepare(stream, producer)
    value = cupy.zeros(1, dtype=cupy.int32)
    out = cupy.full(SMALL, -1, dtype=cupy.int32)
    cupy.cuda.Device().synchronize()
    marker = sl.Event.create()
    marker.record(producer)
    wait_external = {
        "Stream.wait_external": lambda: stream.wait_external(marker),
        "StreamView.wait_external": lambda: sl.StreamView(stream).wait_external(marker),
        "wait_external": lambda: sl.wait_external(stream, marker),
    }[how]
    with sl.capture(stream, mode=mode) as graph:
        wait_external()
        assert stream.capture_info.status == "active"
        kernels.broadcast(stream, out, value)  # out[:] = value[0]
    exec_graph = graph.instantiate()
    exec_graph.upload(stream)
    exec_graph.launch(stream)  # once with nothing held (loads the graph)
    stream.sync()
    assert int((out == 0).sum()) == SMALL
    for i in range(1, REPLAYS + 1):
        kernels.close_gate(producer)
        try:
            kernels.add(producer, value, 1)  # value[0] = i, once the gate opens
            marker.record(producer)  # recorded again: each launch waits for the latest record
            exec_graph.launch(stream)
            assert not stream.is_done(), "the graph ran while the event's work was held back"
            assert not marker.is_done()
        finally:
            kernels.open_gate()
        stream.sync()
        kernels.reset_gate()
        assert marker.is_done()
        assert int((out == i).sum()) == SMALL, (i, out[:4].get())


def run_on_another_thread(call):
    result = {}

    def run():
        try:
            result["value"] = call()
        except Exception as e:  # reported to the test's thread
            result["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return result


@pytest.mark.parametrize("mode", ["global", "thread_local"])
def test_an_event_recorded_before_a_streamlike_capture_refuses_host_waits_inside_it(sl, cupy, kernels, mode):
    stream, producer = sl.Stream.create(), sl.Stream.create()
    kernels.prepare(stream, producer)
    a = cupy.zeros(SMALL, dtype=cupy.int32)
    cupy.cuda.Device().synchronize()
    kernels.close_gate(producer)
    before = producer.record()  # outside any capture; its work is held back by the gate
    made = sl.Event.create()
    made.record(producer)
    try:
        with sl.capture(stream, mode=mode) as graph:
            kernels.add(stream, a, 1)
            capture_id = active(stream)
            for name, call in (
                ("sync", before.sync),
                ("is_done", before.is_done),
                ("sync", made.sync),
                ("is_done", made.is_done),
            ):
                with pytest.raises(
                    RuntimeError, match=rf"event::{name}: this thread began a CUDA graph capture"
                ) as info:
                    call()
                assert "would invalidate the capture" in str(info.value), str(info.value)
                assert active(stream) == capture_id, name
            # Another thread: in global mode CUDA prohibits the call there too (refused by name); a
            # thread-local capture leaves other threads free (CUDA answers: the work is held back).
            elsewhere = run_on_another_thread(before.is_done)
            if mode == "global":
                assert isinstance(elsewhere.get("error"), RuntimeError), elsewhere
                assert "event::is_done: another thread began a CUDA graph capture in global mode" in str(
                    elsewhere["error"]
                )
            else:
                assert elsewhere == {"value": False}
            assert active(stream) == capture_id
            kernels.add(stream, a, 2)
        # After the block they work: the work is still held back.
        assert not before.is_done() and not made.is_done()
    finally:
        kernels.open_gate()
    before.sync()
    made.sync()
    assert before.is_done() and made.is_done()
    kernels.reset_gate()
    exec_graph = graph.instantiate()
    for _ in range(REPLAYS):
        exec_graph.launch(stream)
    stream.sync()
    assert int((a == 3 * REPLAYS).sum()) == SMALL


def test_an_event_recorded_before_a_relaxed_streamlike_capture_may_be_waited_on_inside_it(sl, cupy, kernels):
    # Relaxed mode: CUDA allows these calls during the capture, and the library passes them on.
    stream, producer = sl.Stream.create(), sl.Stream.create()
    kernels.prepare(stream, producer)
    a = cupy.zeros(SMALL, dtype=cupy.int32)
    cupy.cuda.Device().synchronize()
    kernels.add(producer, a, 0)
    before = producer.record()
    with sl.capture(stream, mode="relaxed") as graph:
        kernels.add(stream, a, 1)
        capture_id = active(stream)
        before.sync()
        assert before.is_done()
        assert active(stream) == capture_id
        kernels.add(stream, a, 2)
    exec_graph = graph.instantiate()
    for _ in range(REPLAYS):
        exec_graph.launch(stream)
    stream.sync()
    assert int((a == 3 * REPLAYS).sum()) == SMALL
