"""The streamlike package's refusals under CUDA graph capture, without a GPU.

The package is built against libstreamlike.so and the shared CUDA runtime (test/package/fake_cuda,
the same sources as the installed package) and this process runs against the fake CUDA of
test/fake_cuda, preloaded by meson, which names it in STREAMLIKE_FAKE_CUDA_LIBRARY. The fake
begins and ends captures as CUDA does and records every call that would invalidate one. Each
call of the table is made inside `streamlike.capture(stream, mode=...)` in the three capture
modes: a refused call raises naming the library operation that refused it, an allowed call
answers, no call invalidates the capture (it is still active afterwards and its graph replays).
The package's threads promise is checked here too (threads_stress.py, as on a GPU).

    LD_PRELOAD=$PWD/build/test/fake_cuda/libstreamlike_fake_cuda.so \\
    STREAMLIKE_FAKE_CUDA_LIBRARY=$PWD/build/test/fake_cuda/libstreamlike_fake_cuda.so \\
    STREAMLIKE_PACKAGE_SITE=build/test/package/fake_cuda \\
    python3 -m pytest test/package/test_package_fake_cuda.py
"""

import ctypes
import os

import pytest
import threads_stress

MODES = ["global", "thread_local", "relaxed"]
REPLAYS = 10

_path = os.environ.get("STREAMLIKE_FAKE_CUDA_LIBRARY")
if not _path:
    pytest.skip(
        "STREAMLIKE_FAKE_CUDA_LIBRARY is not set: this file runs against the preloaded fake CUDA",
        allow_module_level=True,
    )
fake = ctypes.CDLL(_path)  # the preloaded library itself: the state the package's calls reach
fake.fake_cuda_invalidations.restype = ctypes.c_size_t
fake.fake_cuda_invalidation.argtypes = [ctypes.c_size_t]
fake.fake_cuda_invalidation.restype = ctypes.c_char_p
fake.fake_cuda_calls.argtypes = [ctypes.c_char_p]
fake.fake_cuda_calls.restype = ctypes.c_long
fake.fake_cuda_capture_status.argtypes = [ctypes.c_void_p]


def invalidations():
    return [fake.fake_cuda_invalidation(i).decode() for i in range(fake.fake_cuda_invalidations())]


class Exporter:
    """A foreign stream object (the protocol only), read afresh: its facts are not known yet."""

    def __init__(self, stream):
        self.stream = stream

    def __cuda_stream__(self):
        return self.stream.__cuda_stream__()


@pytest.fixture(scope="module")
def sl(streamlike):
    assert fake.fake_cuda_present() == 1
    fake.fake_cuda_reset_log()
    created = streamlike.Stream.create()
    assert fake.fake_cuda_calls(b"cuStreamCreateWithPriority") == 1, "the package's calls do not reach the fake"
    assert created.is_done()
    return streamlike


IN_CAPTURE = r".*capturing a CUDA graph.*would invalidate the capture"
EVENT_IN_CAPTURE = r": this thread began a CUDA graph capture"

# name, the call (sl, stream, objects made before the capture), the refusal's pattern (None: the
# call is allowed), the modes it is refused in.
ALL = set(MODES)
STRICT = {"global", "thread_local"}
CALLS = [
    ("Stream.sync", lambda sl, s, o: s.sync(), "shared_stream::sync" + IN_CAPTURE, ALL),
    ("Stream.is_done", lambda sl, s, o: s.is_done(), "shared_stream::is_done" + IN_CAPTURE, ALL),
    ("StreamView.sync", lambda sl, s, o: sl.StreamView(s).sync(), "stream_view::sync" + IN_CAPTURE, ALL),
    ("StreamView.is_done", lambda sl, s, o: sl.StreamView(s).is_done(), "stream_view::is_done" + IN_CAPTURE, ALL),
    ("StreamView.id", lambda sl, s, o: sl.StreamView(Exporter(s)).id, "shared_stream::id" + IN_CAPTURE, ALL),
    ("StreamView.flags", lambda sl, s, o: sl.StreamView(Exporter(s)).flags, "shared_stream::flags" + IN_CAPTURE, ALL),
    ("StreamView.device", lambda sl, s, o: sl.StreamView(Exporter(s)).device, None, set()),
    ("StreamView.priority", lambda sl, s, o: sl.StreamView(Exporter(s)).priority, None, set()),
    ("Stream.capture_info", lambda sl, s, o: s.capture_info, None, set()),
    ("Stream.wait(event before)", lambda sl, s, o: s.wait(o["before"]), r"wait\(stream, event\).*outside", ALL),
    ("wait(stream, event before)", lambda sl, s, o: sl.wait(s, o["before"]), r"wait\(stream, event\).*outside", ALL),
    ("Event.sync (before)", lambda sl, s, o: o["before"].sync(), "event::sync" + EVENT_IN_CAPTURE, STRICT),
    ("Event.is_done (before)", lambda sl, s, o: o["before"].is_done(), "event::is_done" + EVENT_IN_CAPTURE, STRICT),
    ("capture (nested)", lambda sl, s, o: sl.capture(s).__enter__(), r"capture_scope::begin" + IN_CAPTURE, ALL),
    ("GraphExec.launch", lambda sl, s, o: o["exec"].launch(s), r"graph_exec::launch.*capturing", ALL),
    ("GraphExec.upload", lambda sl, s, o: o["exec"].upload(s), r"graph_exec::upload.*capturing", ALL),
    ("Stream.record", lambda sl, s, o: s.record(), None, set()),
    ("wait_external(event before)", lambda sl, s, o: s.wait_external(o["before"]), None, set()),
]


@pytest.fixture
def before(sl):
    """What a program made before the capture: an event recorded outside it, an executable graph."""
    elsewhere = sl.Stream.create()
    with sl.capture(elsewhere) as graph:
        elsewhere.record()
    return {"before": elsewhere.record(), "exec": graph.instantiate(), "stream": elsewhere}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, call, refusal, refused_in", CALLS, ids=[c[0] for c in CALLS])
def test_each_call_is_refused_by_name_or_allowed_and_the_capture_survives(
    sl, before, mode, name, call, refusal, refused_in
):
    stream = sl.Stream.create()
    fake.fake_cuda_reset_log()
    with sl.capture(stream, mode=mode) as graph:
        first = stream.record()  # work before the call...
        if mode in refused_in:
            with pytest.raises(RuntimeError, match=refusal):
                call(sl, stream, before)
        else:
            call(sl, stream, before)
        stream.wait(first)  # ...and after it, joined in the graph
        assert stream.capture_info.status == "active"
        assert fake.fake_cuda_capture_status(stream.handle) == 1
    assert invalidations() == [], f"{name} in a {mode} capture reached a CUDA call that invalidates it"
    executable = graph.instantiate()
    for _ in range(REPLAYS):
        executable.launch(before["stream"])
    before["stream"].sync()
    assert fake.fake_cuda_calls(b"cudaGraphLaunch") == REPLAYS


def test_a_capture_refuses_a_second_entry_by_name(sl):
    stream = sl.Stream.create()
    capture = sl.capture(stream)
    with capture:
        with pytest.raises(TypeError, match="capture: this capture was entered already"):
            capture.__enter__()
        assert stream.capture_info.status == "active"
    assert invalidations() == []
    assert not stream.is_capturing


def test_after_the_capture_every_refused_call_works_again(sl, before):
    stream = sl.Stream.create()
    with sl.capture(stream, mode="global"):
        stream.record()
    stream.sync()
    assert stream.is_done()
    before["before"].sync()
    assert before["before"].is_done()
    stream.wait(before["before"])
    before["exec"].launch(stream)
    assert sl.StreamView(Exporter(stream)).id == stream.id


def test_eight_threads_all_progress_and_the_counts_return(sl):
    # threads_stress.py, as gpu_threads_package.py runs it on a GPU, against the fake.
    threads_stress.check(threads_stress.run(sl))
    assert invalidations() == []


# A fresh process: CuPy's provider is registered once per process, by the first package call that
# reads the current stream; here that call is the refused one itself.
_CUPY_CAPTURE_FIRST_CALL = r"""
import ctypes, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import fake_cupy
import streamlike as sl

fake = ctypes.CDLL(sys.argv[3])
cupy = fake_cupy.make(lambda: 0)
sys.modules["cupy"], sys.modules["cupy.cuda"] = cupy, cupy.cuda


def main():  # locals, gone before the interpreter ends
    capturing, idle = sl.Stream.create(), sl.Stream.create()
    before = idle.record(timing=True)
    with cupy.cuda.Stream.from_external(capturing):  # with s: s.begin_capture(), as CuPy's users do
        assert fake.cudaStreamBeginCapture(ctypes.c_void_p(capturing.handle), 0) == 0  # global
        try:
            {call}
        except RuntimeError as e:
            print("refused:", e)
        finally:
            graph = ctypes.c_void_p()
            assert fake.cudaStreamEndCapture(ctypes.c_void_p(capturing.handle), ctypes.byref(graph)) == 0


main()
print("invalidations:", fake.fake_cuda_invalidations())
"""


@pytest.mark.parametrize(
    "call, operation",
    [
        ("before.sync()", "event::sync"),
        ("before.is_done()", "event::is_done"),
        ("idle.sync()", "shared_stream::sync"),
        ("idle.is_done()", "shared_stream::is_done"),
        ("sl.StreamView(idle).sync()", "stream_view::sync"),
        ("sl.elapsed_ms(before, before)", "streamlike::elapsed_ms"),
    ],
)
def test_a_cupy_capture_is_seen_by_the_first_call_made_in_it(installed, call, operation):
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    result = subprocess.run(
        [sys.executable, "-c", _CUPY_CAPTURE_FIRST_CALL.replace("{call}", call), installed.site, here, _path],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"refused: streamlike: {operation}" in result.stdout, result.stdout
    assert "current stream is capturing a CUDA graph" in result.stdout, result.stdout
    assert "invalidations: 0" in result.stdout, result.stdout


_CREATE_UNDER_DRIVER = r"""
import sys
sys.path.insert(0, sys.argv[1])
import streamlike
try:
    streamlike.Stream.create()
    print("created")
except RuntimeError as e:
    print(e)
"""


def runtime_version():
    version = ctypes.c_int()
    assert fake.cudaRuntimeGetVersion(ctypes.byref(version)) == 0
    return version.value


@pytest.mark.parametrize("driver", [12080, 11080])
def test_a_driver_too_old_for_the_runtime_is_named_with_the_wheel_it_can_run(installed, driver):
    # A fresh process: the fake reads the driver's version when first called.
    import subprocess
    import sys

    runtime = runtime_version()
    if runtime // 1000 != 13:
        pytest.skip(f"the package is built with CUDA {runtime // 1000}, and the drivers named are for CUDA 13's")
    result = subprocess.run(
        [sys.executable, "-c", _CREATE_UNDER_DRIVER, installed.site],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "STREAMLIKE_FAKE_CUDA_DRIVER_VERSION": str(driver)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    text = result.stdout.strip()
    driver_text = f"{driver // 1000}.{driver % 1000 // 10}"
    assert text.startswith("streamlike: "), text
    assert "cudaErrorInsufficientDriver (the CUDA driver supports CUDA " + driver_text + ", older than CUDA 13." in text
    assert "update the NVIDIA driver" in text, text
    if driver // 1000 == 12:  # the cu12 wheel runs there
        assert text.endswith("or install streamlike-cu12, the package built for CUDA 12 drivers)"), text
    else:  # no wheel for it: updating is the one way
        assert "streamlike-cu12" not in text, text


def test_a_driver_of_the_runtimes_major_creates_streams(installed):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", _CREATE_UNDER_DRIVER, installed.site],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "STREAMLIKE_FAKE_CUDA_DRIVER_VERSION": str(runtime_version() // 1000 * 1000)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "created", result.stdout
