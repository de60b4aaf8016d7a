# cython: language_level=3
# A Cython consumer and producer of owning streams, built (conftest.py, for
# test_owning_references.py) against the installed package's owned_stream.pxd and C headers
# (streamlike.get_include()).
from streamlike.owned_stream cimport (streamlike_owned_stream, streamlike_owned_stream_from_capsule,
                                      streamlike_owned_stream_to_capsule)


cdef class Holder:
    """Holds one owning reference, taken from an object's __cuda_stream_owned__()."""
    cdef streamlike_owned_stream* owned

    def __cinit__(self, obj):
        self.owned = streamlike_owned_stream_from_capsule(obj.__cuda_stream_owned__())

    @property
    def handle(self):
        return <size_t>self.owned.handle if self.owned != NULL else None

    def release(self):
        if self.owned != NULL:
            self.owned.deleter(self.owned)
            self.owned = NULL

    def __cuda_stream_owned__(self):
        # Hands its reference on: the capsule's consumer owns it now.
        owned, self.owned = self.owned, NULL
        if owned == NULL:
            return None
        return streamlike_owned_stream_to_capsule(owned)

    def __dealloc__(self):
        self.release()
