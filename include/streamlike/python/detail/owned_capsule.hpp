// streamlike/python/detail/owned_capsule.hpp: owning streams in Python, through
// `__cuda_stream_owned__()` and its "cuda_stream_owned" PyCapsule (docs/owned-stream-abi.md).
// What streamlike.Stream gives out, and what a shared_stream parameter takes first: a reference
// the C++ side owns outright, which keeps no Python object of its own (what the producer's owner
// holds is the producer's business: a Stream made from a Python object keeps that object).
#ifndef STREAMLIKE_PYTHON_DETAIL_OWNED_CAPSULE_HPP
#define STREAMLIKE_PYTHON_DETAIL_OWNED_CAPSULE_HPP

#include <streamlike/c/owned_stream.h>
#include <streamlike/c/owned_stream_python.h>
#include <streamlike/error.hpp>
#include <streamlike/owned_stream.hpp>
#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/translate_exceptions.hpp>
#include <streamlike/shared_stream.hpp>

namespace streamlike::python::detail {

/// A new "cuda_stream_owned" capsule holding one reference to `stream`; None for an empty one;
/// nullptr with a Python exception set on failure.
[[nodiscard]] inline PyObject* owned_capsule(const shared_stream& stream) noexcept {
  if (!stream) Py_RETURN_NONE;
  streamlike_owned_stream* owned = nullptr;
  try {
    owned = to_owned_stream(stream);
  } catch (...) {
    set_error_from_current_exception();
    return nullptr;
  }
  return streamlike_owned_stream_to_capsule(owned); // releases `owned` if it fails
}

/// What asking an object for an owning reference gave.
enum class owned_read {
  taken,       // `out` owns the stream
  not_offered, // no __cuda_stream_owned__ on its type, or it returned None: borrow instead
  failed,      // a Python exception is set
};

/// Takes an owning reference from `obj` through `__cuda_stream_owned__()`, looked up on the type
/// as Python looks up special methods (no exception is made when it is absent). Errors: whatever
/// the method raises (unchanged); TypeError for a result that is not a "cuda_stream_owned"
/// capsule; ValueError for a capsule consumed already, an unknown major version, or a struct
/// from_owned_stream refuses. An unconsumed capsule releases its struct when dropped here.
[[nodiscard]] inline owned_read read_owned(PyObject* obj, shared_stream& out) noexcept {
  PyObject* name = cuda_stream_owned_name();
  if (name == nullptr) return owned_read::failed;
#if defined(Py_GIL_DISABLED)
  // Free-threaded: a borrowed result could be freed by another thread; take a reference.
  const scoped_ref method = scoped_ref::steal(_PyType_LookupRef(Py_TYPE(obj), name));
  if (!method || method.get() == Py_None) return owned_read::not_offered;
#else
  PyObject* method = _PyType_Lookup(Py_TYPE(obj), name); // borrowed; CPython's method cache
  if (method == nullptr || method == Py_None) return owned_read::not_offered;
#endif
  PyObject* call_args[2] = {nullptr, obj}; // slot 0 free for PY_VECTORCALL_ARGUMENTS_OFFSET
  const scoped_ref capsule =
      scoped_ref::steal(PyObject_VectorcallMethod(name, call_args + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr));
  if (!capsule) return owned_read::failed;
  if (capsule.get() == Py_None) return owned_read::not_offered;
  streamlike_owned_stream* owned = streamlike_owned_stream_from_capsule(capsule.get());
  if (owned == nullptr) return owned_read::failed;
  try {
    out = from_owned_stream(owned); // no CUDA call; a refusal releases the struct
    return owned_read::taken;
  } catch (const streamlike::error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (...) {
    set_error_from_current_exception();
  }
  return owned_read::failed;
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_OWNED_CAPSULE_HPP
