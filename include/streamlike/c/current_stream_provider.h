/* streamlike/c/current_stream_provider.h: the C interface through which a framework tells
 * streamlike its current CUDA stream, and lets streamlike set it (docs/current-stream.md).
 *
 * Every framework keeps its own current stream per host thread and device (torch, CuPy, tvm-ffi).
 * A provider is a table of two functions over one of them: get(device) and, optionally,
 * set(device, stream). streamlike asks every registered provider, in priority order, when
 * streamlike::current_stream() is called, and sets every one in scoped_current_stream (Python:
 * `with streamlike.use(s):`). torch and tvm-ffi are built in (looked up in the already-loaded
 * framework, no link-time dependency); anyone else registers a provider at run time.
 *
 * Valid C99 and C++; needs no CUDA header (a stream is a CUstream / cudaStream_t as void*). */
#ifndef STREAMLIKE_C_CURRENT_STREAM_PROVIDER_H
#define STREAMLIKE_C_CURRENT_STREAM_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of streamlike_current_stream_provider a registrant fills in, under the rule every C
 * struct streamlike exchanges follows (the owned stream's too: docs/owned-stream-abi.md, "Versioning"):
 * a major and a minor version first; a reader accepts its own major with any minor and refuses any
 * other major (0: an unfilled table); a minor only appends fields, which a reader of an older minor
 * never reads, and a reader of a newer minor reads only where the writer's minor has them. The
 * table's size follows the versions (struct_size): a reader checks it before it reads any field,
 * refuses a table shorter than the fields its minor has, and copies only the fields it knows.
 * Fill a table with STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT (below), then set its fields. */
#define STREAMLIKE_CURRENT_STREAM_PROVIDER_MAJOR_VERSION 1
#define STREAMLIKE_CURRENT_STREAM_PROVIDER_MINOR_VERSION 0

/* What get and set return. */
/* Done: get wrote the stream; set made it current. */
#define STREAMLIKE_CURRENT_STREAM_OK 0
/* The provider cannot answer on this thread now (e.g. it needs the Python GIL and the thread
 * does not hold it): skipped, not an error. */
#define STREAMLIKE_CURRENT_STREAM_UNAVAILABLE 1
/* The framework failed (a bad device, an exception inside it): current_stream() skips the
 * provider, scoped_current_stream throws naming it. */
#define STREAMLIKE_CURRENT_STREAM_FAILED 2

/* Priorities of the built-in providers: lower is asked first. A registrant picks its own. */
#define STREAMLIKE_CURRENT_STREAM_PRIORITY_TORCH 100
#define STREAMLIKE_CURRENT_STREAM_PRIORITY_TVM_FFI 200
#define STREAMLIKE_CURRENT_STREAM_PRIORITY_CUPY 300
/* A framework asked through DLPack's C exchange API (its current_work_stream), read-only: after
 * every dedicated provider. */
#define STREAMLIKE_CURRENT_STREAM_PRIORITY_DLPACK 400
/* streamlike's own thread-local: always asked last, so any framework's scope opened inside a
 * streamlike scope is seen. */
#define STREAMLIKE_CURRENT_STREAM_PRIORITY_STREAMLIKE INT32_MAX

/* Every function of a provider (get, set, enter, leave) is called from C and must not throw (a C++
 * implementation catches everything and returns STREAMLIKE_CURRENT_STREAM_FAILED), must not call
 * back into streamlike's registration, and must not block on another thread. */
typedef struct streamlike_current_stream_provider {
  uint32_t major_version; /* STREAMLIKE_CURRENT_STREAM_PROVIDER_MAJOR_VERSION */
  uint32_t minor_version; /* STREAMLIKE_CURRENT_STREAM_PROVIDER_MINOR_VERSION as the registrant compiled it */
  uint32_t struct_size;   /* sizeof(streamlike_current_stream_provider) as the registrant compiled it */
  int32_t priority;       /* lower is asked first; equal priorities: the earlier registration first */
  /* Unique among registered providers, e.g. "torch"; copied at registration. */
  const char* name;
  /* Passed to get and set; the registrant's. Must stay valid while registered, and after
   * unregistration until no thread can still be inside get or set and every scope opened before
   * it ended (a scope leaves through the provider it set, even unregistered meanwhile); in
   * practice: for the life of the process, as the framework itself. */
  void* context;
  /* Writes the calling thread's current stream on `device` to *stream. Never NULL. Must be
   * cheap and make no CUDA call that a graph capture forbids (reading a thread-local is the
   * model). The default streams are written as CUDA writes them: NULL, 0x1 (legacy), 0x2
   * (per-thread). */
  int (*get)(void* context, int32_t device, void** stream);
  /* Makes `stream` the calling thread's current stream on `device`. NULL: a read-only provider
   * (scoped_current_stream leaves it alone). Same rules as get. */
  int (*set)(void* context, int32_t device, void* stream);
  /* Optional (both or neither), for a framework whose current stream is more than a handle (torch
   * keeps a stream id beside it): enter makes `stream` current on `device` and writes a token that
   * leave later takes to restore exactly what was current before, and to free the token. A scope
   * uses them instead of get + set when present. leave is called once per successful enter, on the
   * same thread, in reverse order of enters. Same rules as get. */
  int (*enter)(void* context, int32_t device, void* stream, void** token);
  int (*leave)(void* context, int32_t device, void* token);
} streamlike_current_stream_provider;

/* The one way to begin a provider table: this streamlike's versions and size, every other field 0
 * or NULL. `streamlike_current_stream_provider p = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;` then
 * set priority, name, context, get and what else the provider has. */
#define STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT                                                         \
  {                                                                                                     \
    STREAMLIKE_CURRENT_STREAM_PROVIDER_MAJOR_VERSION, STREAMLIKE_CURRENT_STREAM_PROVIDER_MINOR_VERSION, \
        (uint32_t)sizeof(streamlike_current_stream_provider), 0, NULL, NULL, NULL, NULL, NULL, NULL     \
  }

/* Results of register/unregister. */
#define STREAMLIKE_CURRENT_STREAM_REGISTERED 0
#define STREAMLIKE_CURRENT_STREAM_BAD_PROVIDER \
  1                                            /* NULL, no name, no get, a major version other
                                                    than STREAMLIKE_CURRENT_STREAM_PROVIDER_MAJOR_VERSION,
                                                    a struct_size shorter than its minor's fields,
                                                    or only one of enter and leave */
#define STREAMLIKE_CURRENT_STREAM_NAME_TAKEN 2 /* a provider of that name is registered */
#define STREAMLIKE_CURRENT_STREAM_NOT_FOUND 3  /* unregister: no provider of that name */

/* Registers a copy of *provider (its name too). Thread-safe. Exported by libstreamlike; a C
 * library that does not link streamlike can find it with dlsym(RTLD_DEFAULT, ...). */
int streamlike_current_stream_register(const streamlike_current_stream_provider* provider);
/* Removes the provider named `name`. Thread-safe; a thread already inside its get or set
 * finishes the call (see `context`). */
int streamlike_current_stream_unregister(const char* name);

/* The calling thread's current stream on `device` (-1: the thread's current device), as
 * streamlike::current_stream() answers it, written to *stream. Returns STREAMLIKE_CURRENT_STREAM_OK,
 * or STREAMLIKE_CURRENT_STREAM_FAILED (stream NULL, a device below -1 or one the process does not
 * have, the current device unreadable); *stream is left alone then. Never blocks, makes no CUDA
 * call a graph capture forbids. */
int streamlike_current_stream_get(int32_t device, void** stream);

/* Makes `stream` current on `device` (-1: the stream's own device; the current one for the
 * default streams) in every provider that can set it, as streamlike::scoped_current_stream does,
 * and writes to *token what streamlike_current_stream_restore takes to put every provider back.
 * Restore each token once, on the thread that set it, in reverse order of the sets. Returns
 * STREAMLIKE_CURRENT_STREAM_OK, or STREAMLIKE_CURRENT_STREAM_FAILED (token NULL, a device the
 * process does not have, a stream of another device, a provider failing: nothing stays set). */
int streamlike_current_stream_set(int32_t device, void* stream, void** token);
/* Puts back what the set that made `token` found. STREAMLIKE_CURRENT_STREAM_FAILED for NULL, and for
 * a token set on another thread: nothing is put back here (this thread's streams are not that
 * thread's), the scope stays open on the thread that set it and its memory is kept, and a message
 * on stderr says so and that a token is to be restored on the thread that set it. */
int streamlike_current_stream_restore(void* token);

/* The functions above as one table, so that a framework reaches a copy of streamlike it does not
 * link: the streamlike Python package gives its copy's table, where its `use` blocks and CuPy's
 * provider live, in its C API (streamlike/c/package_api.h, field `current_stream`). Versioned as
 * the provider table: a reader checks the major version and, for a field a later minor appends,
 * the minor. The package's functions need the GIL held (CuPy's provider runs Python). */
#define STREAMLIKE_CURRENT_STREAM_API_MAJOR_VERSION 1
#define STREAMLIKE_CURRENT_STREAM_API_MINOR_VERSION 1

typedef struct streamlike_current_stream_api {
  uint32_t major_version;                                              /* STREAMLIKE_CURRENT_STREAM_API_MAJOR_VERSION */
  uint32_t minor_version;                                              /* STREAMLIKE_CURRENT_STREAM_API_MINOR_VERSION */
  int (*get)(int32_t device, void** stream);                           /* streamlike_current_stream_get */
  int (*set)(int32_t device, void* stream, void** token);              /* streamlike_current_stream_set */
  int (*restore)(void* token);                                         /* streamlike_current_stream_restore */
  int (*register_provider)(const streamlike_current_stream_provider*); /* streamlike_current_stream_register */
  int (*unregister_provider)(const char* name);                        /* streamlike_current_stream_unregister */
  int (*check_enabled)(void); /* 1 while this copy's current-stream check is on (its switch) */
  /* Minor 1: the process's registry this copy uses (streamlike/c/current_stream_registry.h). A
   * copy whose streamlike_current_stream_registry_table() is the same reads the same current
   * stream already: it need not ask this table. */
  const struct streamlike_current_stream_registry* registry;
} streamlike_current_stream_api;

/* This copy of libstreamlike's table (never NULL, valid for the life of the process). */
const streamlike_current_stream_api* streamlike_current_stream_api_table(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STREAMLIKE_C_CURRENT_STREAM_PROVIDER_H */
