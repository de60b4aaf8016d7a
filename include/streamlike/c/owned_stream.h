/* streamlike/c/owned_stream.h: an owning reference to a CUDA stream, passed between libraries
 * and languages through a C struct (docs/owned-stream-abi.md is the specification).
 *
 * Valid C99 and C++; needs no CUDA header (the handle is a CUstream / cudaStream_t stored as
 * void*). One streamlike_owned_stream is one owning reference: whoever receives it calls
 * `deleter(self)` exactly once, from any thread, holding no lock (no Python GIL either); the
 * stream stays valid until then. The first four members never change in any version; a minor
 * version only gives meaning to reserved space (zeroed by producers of older minors). */
#ifndef STREAMLIKE_C_OWNED_STREAM_H
#define STREAMLIKE_C_OWNED_STREAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version a producer writes and a consumer understands. A consumer accepts any minor of a
 * major it knows (it ignores what it does not know) and refuses another major (after calling
 * the deleter, which every major keeps at the same place). */
#define STREAMLIKE_OWNED_STREAM_MAJOR_VERSION 1
#define STREAMLIKE_OWNED_STREAM_MINOR_VERSION 1

/* The PyCapsule names: a capsule from __cuda_stream_owned__() is named "cuda_stream_owned"; the
 * consumer that takes its pointer renames it "used_cuda_stream_owned" (so it is consumed once),
 * and the capsule's destructor releases the struct only under the first name. */
#define STREAMLIKE_OWNED_STREAM_CAPSULE_NAME "cuda_stream_owned"
#define STREAMLIKE_OWNED_STREAM_USED_CAPSULE_NAME "used_cuda_stream_owned"

/* `flags` bits (version 1.0; bit 4 from 1.1). Every other bit is zero; a consumer ignores bits
 * it does not know. */
/* The handle is CUDA's legacy default stream (CU_STREAM_LEGACY, 0x1): immortal. */
#define STREAMLIKE_OWNED_STREAM_LEGACY_DEFAULT ((uint64_t)1 << 0)
/* The handle is CUDA's per-thread default stream (CU_STREAM_PER_THREAD, 0x2): immortal. */
#define STREAMLIKE_OWNED_STREAM_PER_THREAD_DEFAULT ((uint64_t)1 << 1)
/* The stream was created non-blocking (cudaStreamNonBlocking / CU_STREAM_NON_BLOCKING). Meaningful
 * only with STREAMLIKE_OWNED_STREAM_HAS_FACTS. */
#define STREAMLIKE_OWNED_STREAM_NON_BLOCKING ((uint64_t)1 << 2)
/* device, priority, stream_id, context_id and STREAMLIKE_OWNED_STREAM_NON_BLOCKING are filled in
 * (so a consumer needs no CUDA call to learn them). Without it they are zero (device -1) and a
 * consumer that needs them asks CUDA. */
#define STREAMLIKE_OWNED_STREAM_HAS_FACTS ((uint64_t)1 << 3)
/* Version 1.1. green_context and sm_count are filled in: the stream was made in that green context
 * (an SM partition), or, with green_context NULL, in a regular context (every SM of its device).
 * Meaningful only with STREAMLIKE_OWNED_STREAM_HAS_FACTS. Without it the partition is unknown, and
 * a consumer that needs it asks CUDA (cuStreamGetGreenCtx). */
#define STREAMLIKE_OWNED_STREAM_HAS_PARTITION ((uint64_t)1 << 4)

/* Reserved words after the version 1.1 members: zero from every 1.x producer that does not use
 * them. The struct's size never changes within a major: 1.1 gave meaning to the first two of the
 * eight words 1.0 reserved. */
#define STREAMLIKE_OWNED_STREAM_RESERVED_WORDS 6

typedef struct streamlike_owned_stream {
  /* --- Stable prefix: the same in every version, major ones included. --- */
  uint32_t major_version; /* STREAMLIKE_OWNED_STREAM_MAJOR_VERSION of the producer */
  uint32_t minor_version; /* STREAMLIKE_OWNED_STREAM_MINOR_VERSION of the producer */
  void* manager_ctx;      /* the producer's; never read by a consumer */
  /* Releases this reference (and frees the struct). Never NULL; called exactly once, by the
   * receiver, from any thread, with no lock held and none needed. */
  void (*deleter)(struct streamlike_owned_stream* self);

  /* --- Version 1.0. --- */
  void* handle;        /* the CUstream (== cudaStream_t); never NULL */
  uint64_t flags;      /* STREAMLIKE_OWNED_STREAM_* bits */
  int32_t device;      /* the stream's device ordinal; -1 without HAS_FACTS or for a default stream */
  int32_t priority;    /* the stream's priority (lower is higher); 0 without HAS_FACTS */
  uint64_t stream_id;  /* the driver's process-unique id (cuStreamGetId); 0 if unknown */
  uint64_t context_id; /* the driver's id of the stream's context (cuCtxGetId); 0 if unknown */

  /* --- Version 1.1 (zero from a 1.0 producer). --- */
  void* green_context; /* the CUgreenCtx the stream was made in (HAS_PARTITION); NULL otherwise */
  uint32_t sm_count;   /* its SM count (HAS_PARTITION and a green context); 0 otherwise */
  uint32_t reserved32; /* zero */
  uint64_t reserved[STREAMLIKE_OWNED_STREAM_RESERVED_WORDS]; /* zero */
} streamlike_owned_stream;

/* The layout, pinned on 64-bit targets (the only ones CUDA supports): offsets and size. */
#if defined(UINTPTR_MAX) && UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
#  if defined(__cplusplus)
#    define STREAMLIKE_OWNED_STREAM_CHECK(name, condition) static_assert(condition, #    name)
#  elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#    define STREAMLIKE_OWNED_STREAM_CHECK(name, condition) _Static_assert(condition, #    name)
#  else /* C99: an array of negative size does not compile */
#    define STREAMLIKE_OWNED_STREAM_CHECK(name, condition) \
      typedef char streamlike_owned_stream_check_##name[(condition) ? 1 : -1]
#  endif
STREAMLIKE_OWNED_STREAM_CHECK(major_version_at_0, offsetof(streamlike_owned_stream, major_version) == 0);
STREAMLIKE_OWNED_STREAM_CHECK(minor_version_at_4, offsetof(streamlike_owned_stream, minor_version) == 4);
STREAMLIKE_OWNED_STREAM_CHECK(manager_ctx_at_8, offsetof(streamlike_owned_stream, manager_ctx) == 8);
STREAMLIKE_OWNED_STREAM_CHECK(deleter_at_16, offsetof(streamlike_owned_stream, deleter) == 16);
STREAMLIKE_OWNED_STREAM_CHECK(handle_at_24, offsetof(streamlike_owned_stream, handle) == 24);
STREAMLIKE_OWNED_STREAM_CHECK(flags_at_32, offsetof(streamlike_owned_stream, flags) == 32);
STREAMLIKE_OWNED_STREAM_CHECK(device_at_40, offsetof(streamlike_owned_stream, device) == 40);
STREAMLIKE_OWNED_STREAM_CHECK(priority_at_44, offsetof(streamlike_owned_stream, priority) == 44);
STREAMLIKE_OWNED_STREAM_CHECK(stream_id_at_48, offsetof(streamlike_owned_stream, stream_id) == 48);
STREAMLIKE_OWNED_STREAM_CHECK(context_id_at_56, offsetof(streamlike_owned_stream, context_id) == 56);
STREAMLIKE_OWNED_STREAM_CHECK(green_context_at_64, offsetof(streamlike_owned_stream, green_context) == 64);
STREAMLIKE_OWNED_STREAM_CHECK(sm_count_at_72, offsetof(streamlike_owned_stream, sm_count) == 72);
STREAMLIKE_OWNED_STREAM_CHECK(reserved32_at_76, offsetof(streamlike_owned_stream, reserved32) == 76);
STREAMLIKE_OWNED_STREAM_CHECK(reserved_at_80, offsetof(streamlike_owned_stream, reserved) == 80);
STREAMLIKE_OWNED_STREAM_CHECK(size_is_128, sizeof(streamlike_owned_stream) == 128);
#  undef STREAMLIKE_OWNED_STREAM_CHECK
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STREAMLIKE_C_OWNED_STREAM_H */
