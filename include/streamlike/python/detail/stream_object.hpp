// streamlike/python/detail/stream_object.hpp: the object and methods of streamlike.Stream, what a
// C++ stream becomes in Python (docs/python-bridge.md, "Giving a C++ stream to Python"). The type
// itself is made on first use by stream_type() (streamlike/python/stream_type.hpp).
#ifndef STREAMLIKE_PYTHON_DETAIL_STREAM_OBJECT_HPP
#define STREAMLIKE_PYTHON_DETAIL_STREAM_OBJECT_HPP

#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/owned_capsule.hpp>
#include <streamlike/shared_stream.hpp>

#include <atomic>
#include <cstdint>
#include <exception>

namespace streamlike::python::detail {

struct stream_object {
  PyObject_HEAD
  shared_stream owner; // empty for a non-owning Stream (made from a stream_view)
  cudaStream_t handle;
};

/// Where stream_type() keeps the type this extension module returns (the package's Stream, or one
/// made for the module), for the life of the process; empty until first looked up.
inline std::atomic<PyTypeObject*>& stream_type_slot() noexcept {
  static std::atomic<PyTypeObject*> slot{nullptr};
  return slot;
}

/// The type if it was made already, else nullptr (never makes it: for identity checks).
[[nodiscard]] inline PyTypeObject* existing_stream_type() noexcept {
  return stream_type_slot().load(std::memory_order_acquire);
}

/// `obj` as a streamlike.Stream of this module, or nullptr if it is not one.
[[nodiscard]] inline stream_object* own_stream_object(PyObject* obj) noexcept {
  PyTypeObject* own = existing_stream_type();
  return own != nullptr && Py_TYPE(obj) == own ? reinterpret_cast<stream_object*>(obj) : nullptr;
}

[[nodiscard]] inline stream_object* as_stream_object(PyObject* self) noexcept {
  return reinterpret_cast<stream_object*>(self);
}

[[nodiscard]] inline PyObject* handle_to_int(cudaStream_t handle) noexcept {
  return PyLong_FromUnsignedLongLong(static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(handle)));
}

inline void stream_object_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  // Dropping the shared_stream may release a Python exporter (py_ref takes the GIL: we hold it,
  // PyGILState_Ensure is reentrant) or destroy the CUDA stream (never throws).
  as_stream_object(self)->owner.~shared_stream();
  type->tp_free(self);
  Py_DECREF(type); // instances of heap types own a reference to their type
}

/// The CUDA Stream Protocol's `(0, address)` for `handle`, as every streamlike object's
/// __cuda_stream__() returns it (a new reference); nullptr with a Python exception set on failure.
[[nodiscard]] inline PyObject* cuda_stream_tuple(cudaStream_t handle) noexcept {
  const scoped_ref address = scoped_ref::steal(handle_to_int(handle));
  if (!address) return nullptr;
  const scoped_ref version = scoped_ref::steal(PyLong_FromLong(0));
  if (!version) return nullptr;
  return PyTuple_Pack(2, version.get(), address.get());
}

inline PyObject* stream_object_cuda_stream(PyObject* self, PyObject*) {
  return cuda_stream_tuple(as_stream_object(self)->handle);
}

// The owning exchange (docs/owned-stream-abi.md): a capsule holding one more reference, or None
// for a non-owning Stream (the consumer then borrows through __cuda_stream__).
inline PyObject* stream_object_cuda_stream_owned(PyObject* self, PyObject*) {
  return owned_capsule(as_stream_object(self)->owner);
}

inline PyObject* stream_object_get_handle(PyObject* self, void*) {
  return handle_to_int(as_stream_object(self)->handle);
}

inline PyObject* stream_object_get_owning(PyObject* self, void*) {
  return PyBool_FromLong(static_cast<bool>(as_stream_object(self)->owner) ? 1 : 0);
}

inline PyObject* stream_object_get_use_count(PyObject* self, void*) {
  return PyLong_FromLong(as_stream_object(self)->owner.use_count());
}

// Capture-safe (cudaStreamIsCapturing): true inside torch.cuda.graph, CuPy's begin_capture and the like.
inline PyObject* stream_object_get_is_capturing(PyObject* self, void*) {
  try {
    return PyBool_FromLong(stream_view{as_stream_object(self)->handle}.is_capturing() ? 1 : 0);
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

inline PyObject* stream_object_repr(PyObject* self) {
  const stream_object* s = as_stream_object(self);
  return PyUnicode_FromFormat("<streamlike.Stream handle=%p %s>", static_cast<void*>(s->handle),
                              static_cast<bool>(s->owner) ? "owning" : "non-owning");
}

inline Py_hash_t stream_object_hash(PyObject* self) {
  const Py_hash_t h = static_cast<Py_hash_t>(reinterpret_cast<std::uintptr_t>(as_stream_object(self)->handle));
  return h == -1 ? -2 : h; // -1 means "error" to CPython
}

// Equal when they name the same handle, as cuda.core's Stream compares.
inline PyObject* stream_object_richcompare(PyObject* self, PyObject* other, int op) {
  if ((op != Py_EQ && op != Py_NE) || Py_TYPE(other) != Py_TYPE(self)) Py_RETURN_NOTIMPLEMENTED;
  const bool same = as_stream_object(self)->handle == as_stream_object(other)->handle;
  if (same == (op == Py_EQ)) Py_RETURN_TRUE;
  Py_RETURN_FALSE;
}

#if PY_VERSION_HEX < 0x030A0000
inline PyObject* stream_object_new(PyTypeObject*, PyObject*, PyObject*) {
  PyErr_SetString(PyExc_TypeError, "streamlike.Stream objects are made by C++ functions that return a stream");
  return nullptr;
}
#endif

/// A new streamlike.Stream type (a new reference), or nullptr with a Python exception set.
[[nodiscard]] inline PyTypeObject* make_stream_type() noexcept {
  static PyMethodDef methods[] = {
      {"__cuda_stream__", &stream_object_cuda_stream, METH_NOARGS,
       "__cuda_stream__() -> tuple[int, int]\n\nThe CUDA Stream Protocol: (0, the cudaStream_t address)."},
      {"__cuda_stream_owned__", &stream_object_cuda_stream_owned, METH_NOARGS,
       "__cuda_stream_owned__() -> PyCapsule | None\n\nAn owning reference to the stream in a PyCapsule named "
       "'cuda_stream_owned' (docs/owned-stream-abi.md), or None if this Stream does not own its stream."},
      {nullptr, nullptr, 0, nullptr}};
  static PyGetSetDef getset[] = {
      {"handle", &stream_object_get_handle, nullptr,
       "The cudaStream_t address, as an int (for torch.cuda.ExternalStream, cupy.cuda.ExternalStream, "
       "numba.cuda.external_stream).",
       nullptr},
      {"owning", &stream_object_get_owning, nullptr,
       "True if this object keeps the stream alive (made from a shared_stream); False for a view.", nullptr},
      {"use_count", &stream_object_get_use_count, nullptr,
       "How many C++ shared_streams share the stream (0 for a view).", nullptr},
      {"is_capturing", &stream_object_get_is_capturing, nullptr,
       "True while the stream is in a CUDA graph capture (cudaStreamIsCapturing; safe during the capture).", nullptr},
      {nullptr, nullptr, nullptr, nullptr, nullptr}};
  static PyType_Slot slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(&stream_object_dealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(&stream_object_repr)},
    {Py_tp_hash, reinterpret_cast<void*>(&stream_object_hash)},
    {Py_tp_richcompare, reinterpret_cast<void*>(&stream_object_richcompare)},
    {Py_tp_methods, methods},
    {Py_tp_getset, getset},
    {Py_tp_doc, const_cast<char*>("A CUDA stream from C++ (streamlike). Implements the CUDA Stream Protocol "
                                  "(__cuda_stream__); `owning` tells whether it keeps the stream alive.")},
#if PY_VERSION_HEX < 0x030A0000
    {Py_tp_new, reinterpret_cast<void*>(&stream_object_new)},
#endif
    {0, nullptr}
  };
  static PyType_Spec spec = {
    "streamlike.Stream",
    static_cast<int>(sizeof(stream_object)),
    0,
#if PY_VERSION_HEX >= 0x030A0000
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
#else
    Py_TPFLAGS_DEFAULT,
#endif
    slots
  };
  return reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_STREAM_OBJECT_HPP
