/* streamlike/c/package_api.h: what the streamlike Python package gives other extension modules
 * and C code, in one PyCapsule: its Stream and StreamView types, where a StreamView keeps its
 * handle, and its copy's current-stream table (docs/python-package.md, "One type across modules").
 *
 * The capsule is STREAMLIKE_PACKAGE_API_CAPSULE, attribute `_C_API` of the module
 * `streamlike._streamlike` (as numpy exports `_ARRAY_API`):
 *
 *   const streamlike_package_api* api = PyCapsule_Import(STREAMLIKE_PACKAGE_API_CAPSULE, 0);
 *   if (api && api->layout_version == STREAMLIKE_PACKAGE_API_VERSION) ... api->current_stream ...
 *
 * One layout version for everything in it: a reader built against another version uses none of
 * it. The current-stream table keeps its own major and minor version (current_stream_provider.h):
 * every copy of libstreamlike hands it out, not only the package.
 *
 * Valid C99 and C++; include Python.h first or let this header include it. Reading the capsule
 * needs the GIL (or an attached thread state on free-threaded builds). */
#ifndef STREAMLIKE_C_PACKAGE_API_H
#define STREAMLIKE_C_PACKAGE_API_H

#include <Python.h>
#include <stdint.h>

#include <streamlike/c/current_stream_provider.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STREAMLIKE_PACKAGE_API_CAPSULE "streamlike._streamlike._C_API"

/* Bumped whenever a field below, or the object layout one describes, changes. */
#define STREAMLIKE_PACKAGE_API_VERSION 2

typedef struct streamlike_package_api {
  /* STREAMLIKE_PACKAGE_API_VERSION of the package. */
  uint32_t layout_version;
  /* The prefix of a Stream object that extension modules fill in: the casters' stream_object (a
   * C++ shared_stream, then the handle), whose size a reader compares with its own. */
  uint32_t stream_object_size;
  /* streamlike.Stream and streamlike.StreamView, alive while the package's module is. */
  PyTypeObject* stream_type;
  PyTypeObject* view_type;
  /* Where a StreamView object keeps its stream's handle (a cudaStream_t): read without calling
   * __cuda_stream__. */
  Py_ssize_t view_handle_offset;
  /* The package's copy's current-stream table, where its `use` blocks and CuPy's provider live. */
  const streamlike_current_stream_api* current_stream;
} streamlike_package_api;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STREAMLIKE_C_PACKAGE_API_H */
