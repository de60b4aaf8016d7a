/* streamlike/c/owned_stream_python.h: a streamlike_owned_stream in a PyCapsule, the form
 * `__cuda_stream_owned__()` returns (docs/owned-stream-abi.md, "In Python").
 *
 * Valid C99 and C++; include Python.h first or let this header include it. Header-only (static
 * inline), so C extensions, Cython (python/streamlike/owned_stream.pxd) and the nanobind and
 * pybind11 casters share one implementation without linking anything. Every function needs the
 * GIL (or an attached thread state on free-threaded builds). */
#ifndef STREAMLIKE_C_OWNED_STREAM_PYTHON_H
#define STREAMLIKE_C_OWNED_STREAM_PYTHON_H

#include <Python.h>
#include <string.h>

#include <streamlike/c/owned_stream.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The capsule's destructor: releases the struct if nobody consumed the capsule (its name is still
 * "cuda_stream_owned"); a consumed capsule ("used_cuda_stream_owned") is left alone. Calls only
 * the deleter, which is at the same place in every version. */
static inline void streamlike_owned_stream_capsule_destructor(PyObject* capsule) {
  streamlike_owned_stream* owned;
  if (!PyCapsule_IsValid(capsule, STREAMLIKE_OWNED_STREAM_CAPSULE_NAME)) return;
  owned = (streamlike_owned_stream*)PyCapsule_GetPointer(capsule, STREAMLIKE_OWNED_STREAM_CAPSULE_NAME);
  if (owned != NULL && owned->deleter != NULL) owned->deleter(owned);
}

/* A new capsule named "cuda_stream_owned" holding `owned` (the return value of
 * __cuda_stream_owned__()). On failure (NULL `owned`, no memory) returns NULL with a Python
 * exception set, having released `owned`: either way the caller no longer owns it. */
static inline PyObject* streamlike_owned_stream_to_capsule(streamlike_owned_stream* owned) {
  PyObject* capsule;
  if (owned == NULL) {
    PyErr_SetString(PyExc_ValueError,
                    "streamlike_owned_stream_to_capsule: the streamlike_owned_stream pointer is null; expected one "
                    "from a producer");
    return NULL;
  }
  capsule = PyCapsule_New(owned, STREAMLIKE_OWNED_STREAM_CAPSULE_NAME, &streamlike_owned_stream_capsule_destructor);
  if (capsule == NULL && owned->deleter != NULL) owned->deleter(owned);
  return capsule;
}

/* Consumes a capsule from __cuda_stream_owned__(): returns its struct, whose reference the caller
 * now owns (call its deleter once, or hand it to streamlike::from_owned_stream), and renames the
 * capsule "used_cuda_stream_owned" so that neither its destructor nor another consumer releases
 * it again. On a problem returns NULL with a Python exception set and leaves the capsule as it was
 * (an unconsumed capsule still releases its struct when dropped, so nothing leaks):
 *   TypeError   not a PyCapsule, or a capsule of another name;
 *   ValueError  a capsule consumed already ("used_cuda_stream_owned"), a null deleter, or a major
 *               version other than STREAMLIKE_OWNED_STREAM_MAJOR_VERSION. */
static inline streamlike_owned_stream* streamlike_owned_stream_from_capsule(PyObject* capsule) {
  const char* name;
  streamlike_owned_stream* owned;
  if (!PyCapsule_CheckExact(capsule)) {
    PyErr_Format(PyExc_TypeError,
                 "expected a PyCapsule named '" STREAMLIKE_OWNED_STREAM_CAPSULE_NAME
                 "' (what __cuda_stream_owned__() returns), got a %.200s object",
                 Py_TYPE(capsule)->tp_name);
    return NULL;
  }
  name = PyCapsule_GetName(capsule);
  if (name == NULL && PyErr_Occurred()) return NULL;
  if (name != NULL && strcmp(name, STREAMLIKE_OWNED_STREAM_USED_CAPSULE_NAME) == 0) {
    PyErr_SetString(PyExc_ValueError,
                    "the '" STREAMLIKE_OWNED_STREAM_CAPSULE_NAME
                    "' capsule was consumed already (it is named '" STREAMLIKE_OWNED_STREAM_USED_CAPSULE_NAME "'); "
                    "each capsule gives its reference once: call __cuda_stream_owned__() again for another");
    return NULL;
  }
  if (name == NULL || strcmp(name, STREAMLIKE_OWNED_STREAM_CAPSULE_NAME) != 0) {
    PyErr_Format(PyExc_TypeError,
                 "expected a PyCapsule named '" STREAMLIKE_OWNED_STREAM_CAPSULE_NAME "', got one named '%.200s'",
                 name != NULL ? name : "(null)");
    return NULL;
  }
  owned = (streamlike_owned_stream*)PyCapsule_GetPointer(capsule, STREAMLIKE_OWNED_STREAM_CAPSULE_NAME);
  if (owned == NULL) return NULL;
  if (owned->deleter == NULL) {
    PyErr_SetString(PyExc_ValueError, "the '" STREAMLIKE_OWNED_STREAM_CAPSULE_NAME
                                      "' capsule's struct has a null deleter; expected one (every producer sets one)");
    return NULL;
  }
  if (owned->major_version != STREAMLIKE_OWNED_STREAM_MAJOR_VERSION) {
    PyErr_Format(PyExc_ValueError,
                 "the '" STREAMLIKE_OWNED_STREAM_CAPSULE_NAME
                 "' capsule holds a streamlike_owned_stream of unknown major version %u.%u; "
                 "this consumer understands major version %d (the capsule is left unconsumed and releases it)",
                 (unsigned)owned->major_version, (unsigned)owned->minor_version, STREAMLIKE_OWNED_STREAM_MAJOR_VERSION);
    return NULL;
  }
  if (PyCapsule_SetName(capsule, STREAMLIKE_OWNED_STREAM_USED_CAPSULE_NAME) != 0) return NULL;
  return owned;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STREAMLIKE_C_OWNED_STREAM_PYTHON_H */
