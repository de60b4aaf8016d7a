"""The bridge's bound functions on a capturing stream, without a GPU: the process runs against the
fake CUDA of test/fake_cuda (fake_cuda.h), preloaded (LD_PRELOAD) by meson, which names it in
STREAMLIKE_FAKE_CUDA_LIBRARY. The test puts a stream the C++ side created into an active or an
invalidated capture (ctypes, the fake's control functions) and calls what a Python caller would:
each refused call raises naming itself and saying the stream is capturing, each capture-safe call
answers, and no call that would invalidate a capture reaches CUDA. A Python package built on the
core can be tested the same way (docs/cuda-graphs.md, "Tested where").

    LD_PRELOAD=build/test/fake_cuda/libstreamlike_fake_cuda.so \\
    STREAMLIKE_FAKE_CUDA_LIBRARY=build/test/fake_cuda/libstreamlike_fake_cuda.so \\
    PYTHONPATH=build/test/bridge python3 -m pytest test/bridge/test_capture_fake_cuda.py
"""

import ctypes
import os

import pytest

ACTIVE, INVALIDATED = 1, 2
MODES = {"global": 0, "thread-local": 1, "relaxed": 2}

_path = os.environ.get("STREAMLIKE_FAKE_CUDA_LIBRARY")
if not _path:
    pytest.skip(
        "STREAMLIKE_FAKE_CUDA_LIBRARY is not set: this file runs against the preloaded fake CUDA",
        allow_module_level=True,
    )
fake = ctypes.CDLL(_path)  # the preloaded library itself: the same state the bridge's calls reach
fake.fake_cuda_set_capture.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
fake.fake_cuda_capture_status.argtypes = [ctypes.c_void_p]
fake.fake_cuda_invalidations.restype = ctypes.c_size_t
fake.fake_cuda_invalidation.argtypes = [ctypes.c_size_t]
fake.fake_cuda_invalidation.restype = ctypes.c_char_p
fake.fake_cuda_calls.argtypes = [ctypes.c_char_p]
fake.fake_cuda_calls.restype = ctypes.c_long


def invalidations():
    return [fake.fake_cuda_invalidation(i).decode() for i in range(fake.fake_cuda_invalidations())]


@pytest.fixture(
    params=[(ACTIVE, m) for m in MODES] + [(INVALIDATED, "global")],
    ids=lambda p: f"{'active' if p[0] == ACTIVE else 'invalidated'}-{p[1]}",
)
def capturing(request, bridge):
    """A stream the C++ side created, in a capture; afterwards: nothing invalidated it."""
    status, mode = request.param
    stream = bridge.create_stream()
    handle = stream.__cuda_stream__()[1]
    assert fake.fake_cuda_set_capture(handle, status, MODES[mode]) == 0
    fake.fake_cuda_reset_log()
    yield stream, status
    assert invalidations() == [], "calls that invalidate a capture reached CUDA"
    assert fake.fake_cuda_capture_status(handle) == status
    assert fake.fake_cuda_set_capture(handle, 0, 0) == 0


def test_the_bridge_reaches_the_fake(bridge):
    fake.fake_cuda_reset_log()
    stream = bridge.create_stream()
    assert fake.fake_cuda_calls(b"cuStreamCreateWithPriority") == 1  # the driver's, in the current context
    assert bridge.is_done(stream)
    assert fake.fake_cuda_calls(b"cudaStreamQuery") == 1


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda b, s: b.sync(s), "stream_view::sync"),
        (lambda b, s: b.is_done(s), "stream_view::is_done"),
        (lambda b, s: b.view_id(s), "stream_view::id"),
    ],
)
def test_refused_calls_raise_by_name(bridge, capturing, call, name):
    stream, _ = capturing
    with pytest.raises(RuntimeError, match=name.replace(":", "\\:") + r".*capturing"):
        call(bridge, stream)


def test_capture_safe_calls_answer(bridge, capturing):
    stream, status = capturing
    assert bridge.view_is_capturing(stream)
    assert bridge.shared_is_capturing(stream)
    if status == ACTIVE:
        assert bridge.queries_of_view(stream) == 0  # device, priority, an event recorded in the capture
        assert bridge.queries_of_shared(stream) == 0
        assert bridge.stream_device(stream) == 0


def test_a_capturing_consumer_refuses_a_producer_outside_its_capture(bridge, capturing):
    stream, _ = capturing
    outside = bridge.create_stream()
    with pytest.raises(RuntimeError, match=r"stream_view::wait"):
        bridge.wait(stream, outside)


def test_retain_until_done_refuses_an_invalidated_capture(bridge, capturing):
    stream, status = capturing

    class Payload:
        pass

    if status == INVALIDATED:
        with pytest.raises(RuntimeError, match=r"retain_until_done.*capturing"):
            bridge.retain_python(stream, Payload())
    else:
        bridge.retain_python(stream, Payload())  # a user object of the graph being built
        assert fake.fake_cuda_calls(b"cudaGraphRetainUserObject") == 1
