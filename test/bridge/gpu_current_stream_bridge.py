"""streamlike::current_stream() in an extension module, with a GPU and the frameworks: torch (its
current stream read and set through its stable C shim), tvm-ffi (TVMFFIEnvGetStream/SetStream),
graph capture, and the check that reports a stream other than the current one. Without the
streamlike package (test/package/gpu_current_stream.py has the Python face). Both bindings; each
test skips without a GPU or its framework."""

import importlib
import os

import conftest  # noqa: F401  (puts the build folder on sys.path when run by hand)
import pytest

NAMES = {"streamlike_current_nb_test": "nanobind", "streamlike_current_pb_test": "pybind11"}
N = 1 << 22  # bytes written by the memsets: enough to take a while
SLEEP_CYCLES = 200_000_000  # torch.cuda._sleep: about 0.1 s on an H200, holding a stream


def _names():
    names = os.environ.get("STREAMLIKE_PY_CURRENT_MODULES")
    return [n for n in names.split(",") if n] if names else list(NAMES)


@pytest.fixture(params=_names(), ids=lambda n: NAMES.get(n, n))
def current(request):
    return importlib.import_module(request.param)


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    return torch


def _ordered_after_held_work(torch, s, launch):
    """Holds `s` (a long sleep), queues buf.fill_(1) on it, then `launch(buf)` which writes 2 into
    buf on whichever stream it chooses. On `s` the 2 lands last; on any other stream it lands while
    `s` still sleeps and the 1 overwrites it. Returns the value read after both finish."""
    buf = torch.zeros(N, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(SLEEP_CYCLES)
        buf.fill_(1)
        launch(buf)
    torch.cuda.synchronize()
    values = buf.unique().tolist()
    assert len(values) == 1, values
    return values[0]


def test_torch_is_a_provider_once_loaded(current, torch):
    assert current.providers()[0] == "torch"
    assert current.providers()[-1] == "streamlike"


def test_inside_torch_stream_a_cpp_launch_on_current_stream_runs_on_it(current, torch):
    s = torch.cuda.Stream()
    used = []
    value = _ordered_after_held_work(torch, s, lambda buf: used.append(current.memset_on_current(buf.data_ptr(), N, 2)))
    assert used == [s.cuda_stream]
    assert value == 2
    assert current.current_address(-1) == torch.cuda.current_stream().cuda_stream  # back outside


def test_the_sentinel_parameter_defaults_to_torchs_current_stream(current, torch):
    s = torch.cuda.Stream()
    used = []
    value = _ordered_after_held_work(torch, s, lambda buf: used.append(current.memset_on(buf.data_ptr(), N, 2)))
    assert used == [s.cuda_stream]
    assert value == 2


def test_a_launch_on_another_stream_is_not_ordered_after_the_held_one(current, torch):
    # The control of the two tests above: the check sees the difference.
    s = torch.cuda.Stream()
    other = torch.cuda.Stream()
    value = _ordered_after_held_work(torch, s, lambda buf: current.memset_on(buf.data_ptr(), N, 2, stream=other))
    assert value == 1


def test_a_cpp_scope_sets_torchs_current_stream_and_restores_it(current, torch):
    s = torch.cuda.Stream()
    before = torch.cuda.current_stream().cuda_stream
    assert current.current_inside_scope(s) == s.cuda_stream
    assert torch.cuda.current_stream().cuda_stream == before
    pool = torch.cuda.Stream()
    with torch.cuda.stream(pool):
        assert current.current_inside_scope(s) == s.cuda_stream
        assert torch.cuda.current_stream() == pool  # the very stream (id too), not its handle


def test_under_torch_graph_capture_current_stream_is_the_capturing_stream(current, torch):
    x = torch.zeros(1024, device="cuda")
    g = torch.cuda.CUDAGraph()
    seen = {}
    with torch.cuda.graph(g):
        capturing = torch.cuda.current_stream()
        seen["address"] = current.current_address(-1)
        seen["capturing"] = current.current_is_capturing()
        x.add_(1)
    # The capture stayed valid: ending it produced a graph that replays.
    assert seen["address"] == capturing.cuda_stream
    assert seen["capturing"]
    g.replay()
    torch.cuda.synchronize()
    assert x[0].item() == 1.0


def test_tvm_ffi_is_a_provider_and_a_cpp_scope_sets_it(current, torch):
    tvm_ffi = pytest.importorskip("tvm_ffi")
    assert "tvm-ffi" in current.providers()
    s = torch.cuda.Stream()
    # current_inside_scope makes s current everywhere; read tvm-ffi's own answer while it is.
    assert current.current_inside_scope(s) == s.cuda_stream
    assert current.conflicts(torch.cuda.current_device()) == []
    del tvm_ffi


def test_the_check_reports_a_stream_other_than_the_current_one_once(current, torch, capfd):
    s = torch.cuda.Stream()
    other = torch.cuda.Stream()
    buf = torch.zeros(16, dtype=torch.uint8, device="cuda")
    current.set_check(True)
    try:
        with torch.cuda.stream(s):
            current.memset_on(buf.data_ptr(), 16, 1, stream=s)  # the current one: silent
            assert "not the current stream" not in capfd.readouterr().err
            for _ in range(2):  # one call site, called twice: one report
                current.memset_on(buf.data_ptr(), 16, 1, stream=other)
        torch.cuda.synchronize()
    finally:
        current.set_check(False)
    err = capfd.readouterr().err
    assert err.count("not the current stream") == 1, err
    assert "from torch" in err
    assert "gpu_current_stream_bridge.py:" in err  # the Python caller's file and line
