"""Eight Python threads using the streamlike package at once, for a few seconds: each loops over
creating, copying, viewing, waiting on, recording and dropping streams and events, handing owning
capsules over, and now and then synchronizing a stream and an event. What the package promises
(docs/python-package.md, "Threads"): every thread makes progress (none starved of the GIL), no
call fails, and afterwards every shared count is back where it started.

Shared by gpu_threads_package.py (a GPU) and test_package_fake_cuda.py (the fake CUDA)."""

import gc
import sys
import threading
import time

THREADS = 8
SECONDS = 3.0
SYNC_EVERY = 16  # iterations between a thread's syncs
FAIR_SHARE = 0.10  # each thread makes at least this fraction of the mean iteration count


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


def run(sl, threads=THREADS, seconds=SECONDS):
    """Runs the loop on `threads` threads; returns a dict of what the caller asserts."""
    shared = sl.Stream.create()
    pool = sl.StreamPool(4)
    shared_view = sl.StreamView(Exporter(shared))  # its facts cache is made by whichever thread asks first
    gc.collect()

    def counts():
        return (shared.use_count, [pool.at(i).use_count - 1 for i in range(4)])  # at() makes one more

    start_counts = counts()
    exporter_refs = sys.getrefcount(shared_view.exporter)
    failures = []
    go = threading.Event()
    rounds = [0] * threads

    def work(index):
        go.wait()
        deadline = time.monotonic() + seconds
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
                if rounds[index] % SYNC_EVERY == 0:
                    created.sync()
                    event.sync()
                assert repr(view) and repr(taken) and hash(view) == hash(created)
                del created, copy, view, foreign, capsule, taken, pooled, event
                rounds[index] += 1
            shared.sync()
        except BaseException as e:  # reported by the caller
            failures.append((index, repr(e)))

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in workers:
        t.start()
    go.set()
    for t in workers:
        t.join(timeout=seconds * 10)
    hung = sum(t.is_alive() for t in workers)
    gc.collect()
    return {
        "hung": hung,
        "failures": failures,
        "rounds": rounds,
        "start_counts": start_counts,
        "end_counts": counts(),
        "exporter_refs": exporter_refs,
        "exporter_refs_after": sys.getrefcount(shared_view.exporter),
    }


def check(result):
    """The promise: no thread hung or failed, each made its share, the counts are back."""
    assert result["hung"] == 0, "a thread did not finish"
    assert result["failures"] == []
    rounds = result["rounds"]
    mean = sum(rounds) / len(rounds)
    print(f"iterations per thread: {rounds} (mean {mean:.0f}, least {min(rounds) / mean:.2f} of the mean)")
    assert mean > 0, rounds
    assert all(n >= FAIR_SHARE * mean for n in rounds), f"a thread was starved: {rounds}"
    assert result["end_counts"] == result["start_counts"]
    assert result["exporter_refs_after"] == result["exporter_refs"]
