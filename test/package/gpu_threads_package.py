"""The streamlike package from 8 threads at once: creating, copying, viewing, waiting on and
dropping streams and owning capsules for several seconds. The package's caches (a view's facts)
are made without relying on the GIL, as its free-threaded build declares; afterwards every
shared count is back where it started. Skipped without a GPU."""

import gc
import sys
import threading
import time

import pytest
from gpu_presence import skip_module_without_gpu

skip_module_without_gpu()

THREADS = 8
SECONDS = 4.0


class Exporter:
    """A foreign stream object (the protocol only)."""

    def __init__(self, stream):
        self.stream = stream

    def __cuda_stream__(self):
        return self.stream.__cuda_stream__()


class OffersOwned:
    def __init__(self, stream):
        self.stream = stream

    def __cuda_stream_owned__(self):
        return self.stream.__cuda_stream_owned__()


def test_eight_threads_create_copy_view_wait_and_drop_streams(streamlike):
    sl = streamlike
    try:
        sl.Stream.create().sync()
    except RuntimeError as e:
        pytest.skip(f"no usable GPU: {e}")
    shared = sl.Stream.create()
    pool = sl.StreamPool(4)
    shared_view = sl.StreamView(Exporter(shared))  # its facts cache is made by whichever thread asks first
    gc.collect()
    start_counts = (shared.use_count, [pool.at(i).use_count - 1 for i in range(4)])  # at() makes one more
    exporter_refs = sys.getrefcount(shared_view.exporter)
    failures = []
    go = threading.Event()
    rounds = [0] * THREADS

    def work(index):
        go.wait()
        deadline = time.monotonic() + SECONDS
        try:
            while time.monotonic() < deadline:
                created = sl.Stream.create()
                copy = sl.Stream(created)
                view = sl.StreamView(copy)
                foreign = sl.Stream(Exporter(shared))
                capsule = shared.__cuda_stream_owned__()
                taken = sl.Stream(OffersOwned(shared))
                pooled = pool.get()
                assert shared_view.id == shared.id and shared_view.device == shared.device
                assert view.id == created.id and copy.use_count >= 2
                view.wait(shared)
                created.wait(pooled)
                sl.wait(pooled, foreign)
                sl.wait(taken, created)
                event = created.record()
                shared.wait(event)
                assert repr(view) and repr(taken) and hash(view) == hash(created)
                del created, copy, view, foreign, capsule, taken, pooled, event
                rounds[index] += 1
            shared.sync()
        except BaseException as e:  # reported by the main thread
            failures.append((index, repr(e)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    go.set()
    for t in threads:
        t.join(timeout=SECONDS * 10)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    assert failures == []
    assert all(n > 0 for n in rounds), rounds
    gc.collect()
    assert (shared.use_count, [pool.at(i).use_count - 1 for i in range(4)]) == start_counts
    # Read outside the assert: pytest's rewritten assert keeps the operand in a temporary (+1).
    exporter_refs_after = sys.getrefcount(shared_view.exporter)
    assert exporter_refs_after == exporter_refs
