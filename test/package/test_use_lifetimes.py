"""What a ``streamlike.use`` block keeps alive, and what it leaves as it was, on a CPU.

The package is the one built against the fake CUDA (test/package/fake_cuda), preloaded with two
devices; CuPy is the stand-in of fake_cupy.py, so that its provider makes and drops stream objects
as CuPy's does. Three promises of docs/current-stream.md ("Python"):

- a block collected while entered (a reference cycle, gc.collect()) keeps its stream alive while
  that stream is current: the block is leaked, never restored elsewhere and never freed;
- entering and leaving leaves the current device as it was, and a switch made inside stays;
- no reference is kept after a thread's block ended and the thread exited.

    STREAMLIKE_FAKE_CUDA_DEVICES=2 LD_PRELOAD=$B/test/fake_cuda/libstreamlike_fake_cuda.so \\
    STREAMLIKE_FAKE_CUDA_LIBRARY=$B/test/fake_cuda/libstreamlike_fake_cuda.so \\
    STREAMLIKE_PACKAGE_SITE=$B/test/package/fake_cuda python3 -m pytest test/package/test_use_lifetimes.py
"""

import ctypes
import gc
import os
import sys
import threading
import weakref

import fake_cupy
import pytest

_cuda_path = os.environ.get("STREAMLIKE_FAKE_CUDA_LIBRARY")
if not _cuda_path:
    pytest.skip(
        "STREAMLIKE_FAKE_CUDA_LIBRARY is not set: this file runs against the preloaded fake CUDA "
        "(meson test package-use-lifetimes)",
        allow_module_level=True,
    )
_cuda = ctypes.CDLL(_cuda_path)
_cuda.cudaGetDevice.argtypes = [ctypes.POINTER(ctypes.c_int)]
_cuda.cudaSetDevice.argtypes = [ctypes.c_int]


def current_device():
    d = ctypes.c_int(-1)
    assert _cuda.cudaGetDevice(ctypes.byref(d)) == 0
    return d.value


def set_device(device):
    assert _cuda.cudaSetDevice(device) == 0


class Exporter:
    """A foreign stream object: only ``__cuda_stream__``, and attributes a cycle can go through."""

    def __init__(self, stream):
        self.stream = stream
        self.block = None

    def __cuda_stream__(self):
        return self.stream.__cuda_stream__()


@pytest.fixture(scope="module")
def sl(streamlike):
    assert os.environ.get("STREAMLIKE_FAKE_CUDA_DEVICES") == "2", "these tests need the fake CUDA's two devices"
    saved = {name: sys.modules.get(name) for name in ("cupy", "cupy.cuda")}
    cupy = fake_cupy.make(current_device)
    sys.modules.update({"cupy": cupy, "cupy.cuda": cupy.cuda})
    assert "cupy" in streamlike.current_stream_providers()  # its provider makes and drops stream objects
    yield streamlike
    for name, module in saved.items():
        if module is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = module


def on_a_thread(work):
    """Runs `work()` on a new thread and returns what it returned (re-raising what it raised)."""
    out = {}

    def run():
        try:
            out["value"] = work()
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            out["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_a_block_collected_while_entered_keeps_its_stream_alive_and_current(sl):
    def work():
        exporter = Exporter(sl.Stream.create())
        handle = exporter.stream.handle
        exporter.block = sl.use(exporter)  # the cycle: exporter -> block -> exporter
        exporter.block.__enter__()
        alive = weakref.ref(exporter)
        del exporter
        gc.collect()
        # Collected while entered: the stream is still current on this thread, so it must live.
        return alive() is not None, sl.current_stream().handle == handle, handle

    alive, current, handle = on_a_thread(work)
    assert alive, "the stream of a block collected while entered was freed while current"
    assert current, "the block collected while entered no longer kept its stream current"
    assert sl.current_stream().handle != handle  # another thread's block: not seen here


def test_use_leaves_the_current_device_as_it_was(sl):
    set_device(0)
    on_1 = sl.Stream.create(device=1)
    on_0 = sl.Stream.create(device=0)
    with sl.use(on_1):
        assert current_device() == 0  # a scope on device 1 entered while 0 is current
        assert sl.current_stream(1).handle == on_1.handle
    assert current_device() == 0
    with sl.use(Exporter(on_1)):  # a foreign object, read through __cuda_stream__
        assert current_device() == 0
    assert current_device() == 0
    with sl.use(on_0):
        set_device(1)  # code inside switches: the switch stays after the block
    assert current_device() == 1
    set_device(1)
    with sl.use(on_0, device=0):
        assert current_device() == 1
    assert current_device() == 1
    set_device(0)


@pytest.mark.parametrize("threads", [1, 4])
def test_no_reference_is_kept_after_a_threads_block_ended_and_the_thread_exited(sl, threads):
    held = [Exporter(sl.Stream.create())]  # the only reference: dropped below
    stream_alive = weakref.ref(held[0].stream)
    exporter_alive = weakref.ref(held[0])
    entered = []

    def work(exporter):
        with sl.use(exporter) as block:
            entered.append(sl.current_stream().handle == exporter.stream.handle)
            assert block.stream is exporter

    workers = [threading.Thread(target=work, args=(held[0],)) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    del w, workers  # the threads' targets and arguments
    assert entered == [True] * threads
    held.clear()
    gc.collect()
    assert exporter_alive() is None, "a use block ended on an exited thread still holds its stream object"
    assert stream_alive() is None


def test_a_block_left_by_leaving_drops_its_stream_at_once(sl):
    stream = sl.Stream.create()
    alive = weakref.ref(stream)
    block = sl.use(stream)
    with block:
        pass
    del block, stream
    assert alive() is None  # no cycle here: dropped without the collector
