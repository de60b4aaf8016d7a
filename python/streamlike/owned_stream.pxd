# streamlike/owned_stream.pxd: the C ABI for owning CUDA streams, for Cython
# (docs/owned-stream-abi.md is the specification).
#
#     from streamlike.owned_stream cimport (streamlike_owned_stream,
#         streamlike_owned_stream_from_capsule, streamlike_owned_stream_to_capsule)
#
# Consuming (a shared_stream-like owner in Cython, as RMM and cuDF are written):
#     cdef streamlike_owned_stream* owned = streamlike_owned_stream_from_capsule(obj.__cuda_stream_owned__())
#     ... use <size_t>owned.handle; keep `owned` while the stream is needed ...
#     owned.deleter(owned)        # exactly once, from any thread, with or without the GIL
# Producing: fill a struct (major/minor, manager_ctx, a `noexcept nogil` deleter, handle, flags,
# facts; reserved words zero) and return streamlike_owned_stream_to_capsule(owned) from
# __cuda_stream_owned__().
#
# Compile against streamlike's include/ folder (the headers below are C99, header-only).

from libc.stdint cimport int32_t, uint32_t, uint64_t

cdef extern from "streamlike/c/owned_stream.h" nogil:
    # Version macros: what this header's producers write and its consumers understand.
    enum:
        STREAMLIKE_OWNED_STREAM_MAJOR_VERSION
        STREAMLIKE_OWNED_STREAM_MINOR_VERSION
        STREAMLIKE_OWNED_STREAM_RESERVED_WORDS
    const char* STREAMLIKE_OWNED_STREAM_CAPSULE_NAME       # "cuda_stream_owned"
    const char* STREAMLIKE_OWNED_STREAM_USED_CAPSULE_NAME  # "used_cuda_stream_owned"
    # flags bits
    const uint64_t STREAMLIKE_OWNED_STREAM_LEGACY_DEFAULT
    const uint64_t STREAMLIKE_OWNED_STREAM_PER_THREAD_DEFAULT
    const uint64_t STREAMLIKE_OWNED_STREAM_NON_BLOCKING
    const uint64_t STREAMLIKE_OWNED_STREAM_HAS_FACTS
    const uint64_t STREAMLIKE_OWNED_STREAM_HAS_PARTITION

    cdef struct streamlike_owned_stream:
        # Stable prefix: the same in every version.
        uint32_t major_version
        uint32_t minor_version
        void* manager_ctx
        void (*deleter)(streamlike_owned_stream* self) noexcept nogil
        # Version 1.0.
        void* handle          # the CUstream / cudaStream_t
        uint64_t flags
        int32_t device        # -1 without STREAMLIKE_OWNED_STREAM_HAS_FACTS
        int32_t priority
        uint64_t stream_id    # 0 if unknown
        uint64_t context_id   # 0 if unknown
        # Version 1.1 (STREAMLIKE_OWNED_STREAM_HAS_PARTITION).
        void* green_context   # the CUgreenCtx the stream was made in; NULL otherwise
        uint32_t sm_count     # its SM count; 0 otherwise
        uint32_t reserved32   # zero
        uint64_t reserved[6]  # STREAMLIKE_OWNED_STREAM_RESERVED_WORDS, zero

cdef extern from "streamlike/c/owned_stream_python.h":
    # A new "cuda_stream_owned" capsule holding `owned`; on failure raises, having released it.
    object streamlike_owned_stream_to_capsule(streamlike_owned_stream* owned)
    # Consumes a capsule: its struct, whose reference the caller now owns; the capsule is renamed
    # "used_cuda_stream_owned". Raises TypeError (not such a capsule) or ValueError (consumed
    # already, unknown major version, null deleter) and leaves the capsule as it was.
    streamlike_owned_stream* streamlike_owned_stream_from_capsule(object capsule) except NULL
    # The destructor of a capsule this header makes: releases an unconsumed capsule's struct.
    void streamlike_owned_stream_capsule_destructor(object capsule)
