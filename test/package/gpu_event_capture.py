"""The package's Event under the Python frameworks' CUDA graph captures, in each capture mode
(global, thread_local, relaxed): torch.cuda.graph and CuPy's begin_capture/end_capture.

What it checks (docs/cuda-graphs.md, "Events under capture"):
  * an Event recorded on the capturing stream (StreamView.record, Stream.record) refuses sync(),
    is_done() and elapsed_ms() by name, the capture still active, and the graph replays the work
    captured around the calls with the right values;
  * Stream.wait(event) of an event recorded before the capture is refused by name ("outside that
    capture") instead of invalidating the capture; fork and join through events of the capture work;
  * after the capture, the recorded event is still refused (CUDA answers cudaErrorCapturedEvent).

Each test skips without a GPU or without its framework. The package is installed by conftest.py.
"""
import ctypes

import pytest

REPLAYS = 10
MODES = ["global", "thread_local", "relaxed"]


def _driver_problem():
    """Why no GPU can be used (asked of the driver directly, before building the package), or None."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return f"no CUDA driver ({e})"
    if cuda.cuInit(0) != 0:
        return "the CUDA driver has no usable device (cuInit failed)"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return "no CUDA device"
    return None


if _driver_problem() is not None:
    pytest.skip(_driver_problem(), allow_module_level=True)


@pytest.fixture(scope="module")
def sl(streamlike):
    try:
        streamlike.Stream.create().sync()
    except RuntimeError as e:
        pytest.skip(f"no usable GPU: {e}")
    return streamlike


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    return torch


@pytest.fixture(scope="module")
def cupy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("CuPy sees no GPU")
    except cupy.cuda.runtime.CUDARuntimeError as e:
        pytest.skip(f"CuPy sees no GPU: {e}")
    return cupy


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
        assert main.is_capturing
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


def cupy_mode(cupy, mode):
    names = {"global": "streamCaptureModeGlobal", "thread_local": "streamCaptureModeThreadLocal",
             "relaxed": "streamCaptureModeRelaxed"}
    return getattr(cupy.cuda.runtime, names[mode])


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
            assert s.is_capturing()
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
