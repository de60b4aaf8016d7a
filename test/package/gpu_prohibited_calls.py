"""The calls a capture prohibits, made through the package during every kind of capture a user
holds: torch.cuda.graph, CuPy's begin_capture and streamlike.capture, each in the three capture
modes (docs/cuda-graphs.md, "Calls a capture prohibits").

One table: for each call (sync() and is_done() of an event recorded before the capture, of an idle
Stream and of a StreamView of it, elapsed_ms of two events recorded before), under each capture,
the call is either refused by name (RuntimeError naming the call, "would invalidate the capture") or
allowed and answers; in both cases the capture is still active afterwards, and the graph replays
the work captured around the calls 10 times with the right values.

Expected: refused in every mode of a capture streamlike did not begin (its mode cannot be asked, so
it counts as global: the documented decision), refused in global and thread_local mode of
streamlike.capture, allowed in its relaxed mode (CUDA allows the calls there).

Each test skips without a GPU or without its framework. The package is installed by conftest.py.
"""

import pytest
from capture_support import MODES, cupy_mode, no_collection
from gpu_presence import skip_module_without_gpu

REPLAYS = 10
N = 16

skip_module_without_gpu()


@pytest.fixture(autouse=True)
def no_collection_inside_captures():
    with no_collection():
        yield


class Outside:
    """What the calls touch, all made before the capture: an idle stream and finished events."""

    def __init__(self, sl):
        self.idle = sl.Stream.create()
        self.before = self.idle.record()
        self.start = self.idle.record(timing=True)
        self.end = self.idle.record(timing=True)
        self.idle.sync()
        self.view = sl.StreamView(self.idle)


# (name, the call, the name the refusal carries, what the call answers where it is allowed)
CALLS = [
    ("event recorded before: sync", lambda sl, o: o.before.sync(), r"event::sync", None),
    ("event recorded before: is_done", lambda sl, o: o.before.is_done(), r"event::is_done", True),
    ("idle Stream: sync", lambda sl, o: o.idle.sync(), r"::sync", None),
    ("idle Stream: is_done", lambda sl, o: o.idle.is_done(), r"::is_done", True),
    ("idle StreamView: sync", lambda sl, o: o.view.sync(), r"::sync", None),
    ("idle StreamView: is_done", lambda sl, o: o.view.is_done(), r"::is_done", True),
    ("events recorded before: elapsed_ms", lambda sl, o: sl.elapsed_ms(o.start, o.end) >= 0.0, r"elapsed_ms", True),
]
CALL_IDS = [c[0] for c in CALLS]


def refused(who, mode):
    return who != "streamlike.capture" or mode != "relaxed"


def make_call(sl, outside, capturing_view, who, mode, call):
    _, fn, refusal_name, allowed_answer = call
    if refused(who, mode):
        with pytest.raises(RuntimeError, match=refusal_name + r".*would invalidate the capture"):
            fn(sl, outside)
    else:
        assert fn(sl, outside) == allowed_answer
    info = capturing_view.capture_info
    assert info.status == "active", f"{call[0]} under {who} ({mode}) left the capture {info.status}"


@pytest.mark.parametrize("call", CALLS, ids=CALL_IDS)
@pytest.mark.parametrize("mode", MODES)
def test_under_torch_graph(sl, torch, mode, call):
    outside = Outside(sl)
    x = torch.zeros(N, dtype=torch.int32, device="cuda")
    x.add_(1)  # warm up outside the capture
    x.zero_()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, capture_error_mode=mode):
        x.add_(1)
        make_call(sl, outside, sl.StreamView(torch.cuda.current_stream()), "torch.cuda.graph", mode, call)
        x.add_(2)
    x.zero_()
    torch.cuda.synchronize()
    for _ in range(REPLAYS):
        g.replay()
    torch.cuda.synchronize()
    assert bool((x == 3 * REPLAYS).all())


@pytest.mark.parametrize("call", CALLS, ids=CALL_IDS)
@pytest.mark.parametrize("mode", MODES)
def test_under_cupy_begin_capture(sl, cupy, mode, call):
    outside = Outside(sl)
    s = cupy.cuda.Stream(non_blocking=True)
    a = cupy.zeros(N, dtype=cupy.int32)
    with s:
        a += 1  # warm up outside the capture (kernel loading)
        a.fill(0)
    s.synchronize()
    with s:
        s.begin_capture(mode=cupy_mode(cupy, mode))
        try:
            a += 1
            make_call(sl, outside, sl.StreamView(s), "CuPy begin_capture", mode, call)
            a += 2
        finally:
            g = s.end_capture()
    for _ in range(REPLAYS):
        g.launch(s)
    s.synchronize()
    assert int((a == 3 * REPLAYS).sum()) == N


@pytest.mark.parametrize("call", CALLS, ids=CALL_IDS)
@pytest.mark.parametrize("mode", MODES)
def test_under_streamlike_capture(sl, torch, mode, call):
    outside = Outside(sl)
    stream = sl.Stream.create()
    on_stream = torch.cuda.ExternalStream(stream.handle)
    x = torch.zeros(N, dtype=torch.int32, device="cuda")
    with torch.cuda.stream(on_stream):
        x.add_(1)  # warm up outside the capture
        x.zero_()
    stream.sync()
    with sl.capture(stream, mode=mode) as graph:
        with torch.cuda.stream(on_stream):
            x.add_(1)
        make_call(sl, outside, sl.StreamView(stream), "streamlike.capture", mode, call)
        with torch.cuda.stream(on_stream):
            x.add_(2)
    exec_graph = graph.instantiate()
    for _ in range(REPLAYS):
        exec_graph.launch(stream)
    stream.sync()
    assert bool((x == 3 * REPLAYS).all())
