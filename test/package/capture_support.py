"""What the package's capture test modules share: the capture modes, CuPy's names for them, and a
context in which no garbage collection runs."""

import contextlib
import gc

MODES = ["global", "thread_local", "relaxed"]


def cupy_mode(cupy, mode):
    """CuPy's constant for the capture mode named `mode` (one of MODES)."""
    names = {
        "global": "streamCaptureModeGlobal",
        "thread_local": "streamCaptureModeThreadLocal",
        "relaxed": "streamCaptureModeRelaxed",
    }
    return getattr(cupy.cuda.runtime, names[mode])


@contextlib.contextmanager
def no_collection():
    """Collects once, then runs the body with the collector off. A collection during a capture may
    free CUDA objects of earlier tests (pinned memory, CuPy's events and streams), and in global and
    thread_local mode such a call invalidates the capture under test (seen once on the H200)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
