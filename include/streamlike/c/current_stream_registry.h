/* streamlike/c/current_stream_registry.h: the one current-stream registry of a process, as every
 * copy of streamlike in it finds and uses it (docs/current-stream.md, "One registry per process").
 *
 * A process may hold several copies of streamlike: libstreamlike.so, the Python package's static
 * copy, static copies inside extension modules loaded RTLD_LOCAL, the checker's. The first copy to
 * start publishes its registry as this table, and every later copy forwards its registry's calls
 * (reads, scopes, registration, listings) to it, so a provider registered through any copy and a
 * scope opened in any copy are seen from every other.
 *
 * Rendezvous: the publishing copy sets the environment variable STREAMLIKE_CURRENT_STREAM_REGISTRY
 * to "<pid>:<address of the table>:<nonce>" (decimal, then hexadecimal with 0x). A copy that finds
 * it reads the table's header without trusting the address (a copy that cannot be read, as after
 * exec, is no table) and accepts it only when the magic, the nonce and `self` (the table's own
 * address) all match. The pid is what the publisher had; a forked child keeps the table (its memory
 * is the parent's copy) and is not refused for its new pid.
 *
 * Valid C99 and C++; needs no CUDA header. */
#ifndef STREAMLIKE_C_CURRENT_STREAM_REGISTRY_H
#define STREAMLIKE_C_CURRENT_STREAM_REGISTRY_H

#include <streamlike/c/current_stream_provider.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The environment variable that holds the published table's address. */
#define STREAMLIKE_CURRENT_STREAM_REGISTRY_VARIABLE "STREAMLIKE_CURRENT_STREAM_REGISTRY"
/* The first word of every table: "slcsreg" and a 1 ('s','l','c','s','r','e','g','1' as bytes of a
 * little-endian word). */
#define STREAMLIKE_CURRENT_STREAM_REGISTRY_MAGIC 0x3167657273636c73ULL
/* Major: a layout no reader of another major may read past the header. Minor: fields appended. */
#define STREAMLIKE_CURRENT_STREAM_REGISTRY_MAJOR_VERSION 1
#define STREAMLIKE_CURRENT_STREAM_REGISTRY_MINOR_VERSION 0

/* What the table's functions return, besides STREAMLIKE_CURRENT_STREAM_OK,
 * STREAMLIKE_CURRENT_STREAM_NAME_TAKEN and STREAMLIKE_CURRENT_STREAM_NOT_FOUND (of the provider
 * header): each value its own, so that a caller tells them apart. */
/* A bad argument (a device the process lacks, a stream of another device, a bad provider table,
 * streamlike's own provider to remove): std::invalid_argument in C++; the message says what and
 * what was expected. */
#define STREAMLIKE_CURRENT_STREAM_REGISTRY_INVALID_ARGUMENT 5
/* Anything else (a provider failing, out of memory): streamlike::error in C++. */
#define STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED 4

typedef struct streamlike_current_stream_registry {
  /* The header: the same words, in the same places, in every major version. */
  uint64_t magic;                                        /* STREAMLIKE_CURRENT_STREAM_REGISTRY_MAGIC */
  uint64_t nonce;                                        /* random, also in the environment variable */
  const struct streamlike_current_stream_registry* self; /* the table's own address */
  uint32_t struct_size;   /* sizeof the table as its publisher compiled it: no reader reads past it */
  uint32_t major_version; /* STREAMLIKE_CURRENT_STREAM_REGISTRY_MAJOR_VERSION */
  uint32_t minor_version; /* STREAMLIKE_CURRENT_STREAM_REGISTRY_MINOR_VERSION */
  uint32_t reserved;      /* 0 */
  /* Major 1, minor 0. Each function is thread-safe, never throws, and writes a message (NUL
   * terminated, truncated to message_size) where it fails and `message` is not NULL. */
  /* streamlike::current_stream(device) for a device >= 0, or -1 for the calling thread's current
   * device: OK, else FAILED. */
  int (*current)(int32_t device, void** stream);
  /* The same, and the name of the provider that answered ("" for none), truncated to name_size. */
  int (*answer)(int32_t device, void** stream, char* name, size_t name_size);
  /* Opens a scoped_current_stream of `stream` on `device` (>= 0) on the calling thread: *token is
   * what leave takes, on the same thread, in reverse order of enters. OK, INVALID_ARGUMENT, FAILED. */
  int (*enter)(int32_t device, void* stream, void** token, char* message, size_t message_size);
  /* Ends the scope `token` opened. OK; FAILED for NULL, and for a scope begun on another thread
   * (left open there, never freed; said on stderr). */
  int (*leave)(void* token);
  /* Registers *provider (any version the publisher reads: it reads the provider's own size and
   * version). OK, STREAMLIKE_CURRENT_STREAM_NAME_TAKEN (a provider of that name is registered),
   * INVALID_ARGUMENT (a bad table). */
  int (*register_provider)(const streamlike_current_stream_provider* provider, char* message, size_t message_size);
  /* Removes the provider named `name`: OK, STREAMLIKE_CURRENT_STREAM_NOT_FOUND, INVALID_ARGUMENT
   * (streamlike's own). */
  int (*unregister_provider)(const char* name, char* message, size_t message_size);
  /* Calls `each` once per active provider, in asking order. OK, FAILED. */
  int (*providers)(void (*each)(void* context, const char* name, int32_t priority, int can_set), void* context);
  /* streamlike::current_stream_conflicts(device) for a device >= 0: `each` once per answer, the
   * chosen one first; no call when they agree. OK, FAILED. */
  int (*conflicts)(int32_t device, void (*each)(void* context, const char* name, void* stream), void* context);
  /* The current-stream check's report (streamlike/current_stream_check.hpp): reports `given` at
   * `site` when it is not current_stream(device), once per site for the process, to the registry's
   * reporter. The switch that decides whether a site checks is each copy's own. */
  void (*check)(int32_t device, void* given, const char* site);
  /* Forgets the sites reported, so that each reports once again (the check turned on again). */
  void (*forget_reported)(void);
  /* Replaces the reporter (a streamlike::current_stream_check_reporter; NULL: stderr) and returns the
   * previous one; forgets the sites reported. */
  void (*(*set_reporter)(void (*reporter)(void)))(void);
} streamlike_current_stream_registry;

/* The registry this copy of streamlike uses: the one it found, or its own where it was first (or
 * where the table it found was of another major). Never NULL. */
const streamlike_current_stream_registry* streamlike_current_stream_registry_table(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STREAMLIKE_C_CURRENT_STREAM_REGISTRY_H */
