#!/usr/bin/env python3
"""Checks the example modules (streams_nb, streams_pb) from Python; no GPU needed.

Usage: check_extension.py MODULE_DIR   (the folder holding the built modules)

What a user of such a module relies on, for each module:
  - a stream_view parameter takes any object with __cuda_stream__ and refuses an int;
  - a shared_stream parameter keeps the Python object alive while C++ holds it, and lets it go after;
  - a shared_stream returned is a Stream with __cuda_stream__, which the other module accepts;
  - both modules return the same Stream type, the streamlike package's, where it is importable,
    and a package Stream given to a shared_stream parameter shares its owner;
  - create() makes a stream on a GPU machine, and without a driver or device says so.
Prints one line per check; exit status 0 when all pass, 1 otherwise.
"""

import gc
import importlib
import sys
import weakref

FAILURES = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        FAILURES.append(what)


class ForeignStream:
    """A stream object from 'another library': only the CUDA Stream Protocol."""

    def __init__(self, address):
        self.address = address

    def __cuda_stream__(self):
        return (0, self.address)


def check_module(m, other):
    name = m.__name__
    check(m.handle(ForeignStream(0x1234)) == 0x1234, f"{name}.handle(stream_view) reads __cuda_stream__")
    try:
        m.handle(5)
        check(False, f"{name}.handle(5) refuses an int")
    except TypeError as e:
        check("__cuda_stream__" in str(e), f"{name}.handle(5) refuses an int with TypeError naming __cuda_stream__")

    exporter = ForeignStream(0x5678)
    alive = weakref.ref(exporter)
    m.keep(exporter)
    del exporter
    gc.collect()
    check(alive() is not None and m.kept() == 1, f"{name}.keep(shared_stream) keeps the exporter alive")
    m.release()
    gc.collect()
    check(alive() is None, f"{name}.release() lets the exporter go")

    stream = m.legacy_default()
    check(stream.__cuda_stream__() == (0, 1), f"{name}.legacy_default() returns a Stream with __cuda_stream__ (0, 1)")
    check(other.handle(stream) == 1, f"{other.__name__}.handle accepts {name}'s Stream")

    try:
        created = m.create()
    except RuntimeError as e:
        text = str(e)
        check(
            "no CUDA driver found" in text or "no CUDA device" in text,
            f"{name}.create() without a GPU says why: {text[:100]}...",
        )
    else:
        check(m.handle(created) not in (0, 1, 2), f"{name}.create() makes a new stream (GPU machine)")


def main(argv):
    sys.path.insert(0, argv[1])
    nb = importlib.import_module("streams_nb")
    pb = importlib.import_module("streams_pb")
    check_module(nb, pb)
    check_module(pb, nb)
    try:
        import streamlike
    except ImportError:
        print("note: the streamlike package is not importable here: each module made its own Stream type")
        check(nb.Stream is not pb.Stream, "without the package, each module has a Stream type of its own")
    else:
        check(
            nb.Stream is streamlike.Stream and pb.Stream is streamlike.Stream,
            "both modules return the package's streamlike.Stream",
        )
        check(type(nb.legacy_default()) is type(pb.legacy_default()), "one Stream type across modules")
        # A package Stream given to a shared_stream parameter shares its owner: one more reference
        # on the same count (C++ sees 2: the Stream's and the parameter's), no Python object kept.
        owning = streamlike.Stream(ForeignStream(0x9ABC))
        for m in (nb, pb):
            check(
                m.use_count(owning) == 2 and owning.use_count == 1,
                f"{m.__name__}: a package Stream's owner is shared (C++ use_count {m.use_count(owning)}, "
                f"Python use_count {owning.use_count})",
            )
    print(f"{'FAIL' if FAILURES else 'PASS'}: {len(FAILURES)} of the checks failed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
