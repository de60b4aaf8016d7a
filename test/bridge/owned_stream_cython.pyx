# cython: language_level=3
# The Cython side of the owning-exchange tests (test_owned_stream_cython.py): consumes and produces
# owning streams with nothing but python/streamlike/owned_stream.pxd, as a Cython library would.
from libc.stdlib cimport calloc, free

from streamlike.owned_stream cimport (
    STREAMLIKE_OWNED_STREAM_HAS_FACTS,
    STREAMLIKE_OWNED_STREAM_MAJOR_VERSION,
    STREAMLIKE_OWNED_STREAM_MINOR_VERSION,
    streamlike_owned_stream,
    streamlike_owned_stream_from_capsule,
    streamlike_owned_stream_to_capsule,
)

cdef long released_count = 0


def consume(obj):
    """Takes an owning reference from obj.__cuda_stream_owned__(), reads it, releases it."""
    cdef streamlike_owned_stream* owned = streamlike_owned_stream_from_capsule(obj.__cuda_stream_owned__())
    facts = {
        "major": owned.major_version,
        "minor": owned.minor_version,
        "handle": <size_t>owned.handle,
        "has_facts": (owned.flags & STREAMLIKE_OWNED_STREAM_HAS_FACTS) != 0,
        "device": owned.device,
        "stream_id": owned.stream_id,
    }
    owned.deleter(owned)
    return facts


def consume_capsule(capsule):
    """The same, given the capsule itself (to test its refusals); returns the handle."""
    cdef streamlike_owned_stream* owned = streamlike_owned_stream_from_capsule(capsule)
    handle = <size_t>owned.handle
    owned.deleter(owned)
    return handle


cdef void release(streamlike_owned_stream* self) noexcept nogil:
    global released_count
    released_count += 1  # the tests drop one reference at a time
    free(self)


def released():
    return released_count


cdef class Producer:
    """A stream owner written in Cython: each __cuda_stream_owned__() gives one owning reference
    to fake handle `handle`, released by a deleter that needs no GIL."""

    cdef size_t handle

    def __init__(self, size_t handle):
        self.handle = handle

    def __cuda_stream_owned__(self):
        cdef streamlike_owned_stream* owned = <streamlike_owned_stream*>calloc(1, sizeof(streamlike_owned_stream))
        if owned == NULL:
            raise MemoryError()
        owned.major_version = STREAMLIKE_OWNED_STREAM_MAJOR_VERSION
        owned.minor_version = STREAMLIKE_OWNED_STREAM_MINOR_VERSION
        owned.manager_ctx = NULL
        owned.deleter = release
        owned.handle = <void*>self.handle
        owned.flags = STREAMLIKE_OWNED_STREAM_HAS_FACTS
        owned.device = 0
        owned.stream_id = self.handle
        return streamlike_owned_stream_to_capsule(owned)
