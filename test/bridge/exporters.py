"""The fake stream objects and helpers the bridge tests share: exporters of every shape of
__cuda_stream__ (a method, the deprecated attribute, one that raises, one opted out), and reference
counting that holds no temporaries.

Addresses given to stream_view parameters are never dereferenced (the C++ side only reads the
handle back), so fake ones are safe. shared_stream parameters query CUDA for non-default
streams, so the fake objects given to them export the default streams (0, 1 or 2), except in the
test that checks the CUDA error on a machine without a GPU (test_references.py).
"""

import gc
import sys

import pytest

LEGACY = 1  # cudaStreamLegacy
PER_THREAD = 2  # cudaStreamPerThread


class Exporter:
    """A stream object: __cuda_stream__() returns the stored `info`, whatever it is."""

    def __init__(self, info):
        self.info = info
        self.calls = 0

    def __cuda_stream__(self):
        self.calls += 1
        return self.info


class AttributeExporter:
    """The deprecated form: __cuda_stream__ is the tuple itself, not a method."""

    def __init__(self, info):
        self.__cuda_stream__ = info


class RaisingExporter:
    """__cuda_stream__() raises the stored exception object."""

    def __init__(self, error):
        self.error = error

    def __cuda_stream__(self):
        raise self.error


class FreshRaisingExporter:
    """__cuda_stream__() raises a new exception each time (re-raising one object would grow its
    traceback, which references this exporter's frames, and look like a leak)."""

    def __cuda_stream__(self):
        raise Boom("fresh")


class PropertyRaisingExporter:
    """Looking __cuda_stream__ up raises (a property that fails)."""

    @property
    def __cuda_stream__(self):
        raise KeyError("lookup failed")


class OptedOut:
    """__cuda_stream__ = None: the object says it is not a stream (like __hash__ = None)."""

    __cuda_stream__ = None


class NotAStream:
    pass


class Boom(Exception):
    pass


def refcounts(*objects):
    """sys.getrefcount of each object. Compare results held in variables: pytest's assertion
    rewriting keeps temporaries of the asserted expression (e.g. `e.info`) alive while it runs."""
    gc.collect()
    return [sys.getrefcount(o) for o in objects]


def swallow(expected, call, *args):
    """Calls and drops the expected exception here, so its traceback (which references the
    arguments' frames) does not keep references alive in the caller."""
    try:
        call(*args)
    except expected:
        return
    pytest.fail(f"{call.__name__} did not raise {expected.__name__}")


BAD_RESULTS = [
    # (what __cuda_stream__ returns, exception type, text the message must contain)
    (5, TypeError, "must return a sequence of 2 ints (version, address), got an object of type 'int'"),
    (None, TypeError, "got an object of type 'NoneType'"),
    ("ab", TypeError, "got an object of type 'str'"),
    ((0,), ValueError, "got 1 element(s)"),
    ((0, 1, 2), ValueError, "got 3 element(s)"),
    ([], ValueError, "got 0 element(s)"),
    ((1, 0x1000), ValueError, "protocol version 1; only version 0 is defined"),
    ((-1, 0x1000), ValueError, "protocol version -1"),
    ((2**70, 0x1000), ValueError, "protocol version 1180591620717411303424"),
    (("0", 0x1000), TypeError, "returned a version of type 'str'; expected an int"),
    ((0.0, 0x1000), TypeError, "returned a version of type 'float'"),
    ((0, -5), ValueError, "negative stream address -5"),
    ((0, -(2**70)), ValueError, "negative stream address"),
    ((0, 2**63), ValueError, "beyond 2**63 - 1"),
    ((0, 2**64), ValueError, "beyond 2**63 - 1"),
    ((0, 1.5), TypeError, "returned a stream address of type 'float'"),
    ((0, None), TypeError, "returned a stream address of type 'NoneType'"),
    ((0, "0x10"), TypeError, "returned a stream address of type 'str'"),
]


def fake_torch_stream_class():
    """A class shaped like torch.cuda.Stream: its __cuda_stream__ is a Python function that says
    it is torch's (module torch.cuda.streams, qualname Stream.__cuda_stream__) and returns
    (0, self.cuda_stream). `calls` counts how often the method really runs."""
    calls = []

    def __cuda_stream__(self):
        calls.append(self)
        return (0, self.cuda_stream)

    __cuda_stream__.__module__ = "torch.cuda.streams"
    __cuda_stream__.__qualname__ = "Stream.__cuda_stream__"

    class Stream:
        reads = 0  # how often `cuda_stream` was read

        def __init__(self, handle):
            self.handle = handle

        @property
        def cuda_stream(self):
            type(self).reads += 1
            return self.handle

    Stream.__cuda_stream__ = __cuda_stream__
    return Stream, calls
