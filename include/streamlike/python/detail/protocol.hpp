// streamlike/python/detail/protocol.hpp: the Python CUDA Stream Protocol in plain CPython API,
// shared by the nanobind and pybind11 casters (streamlike/python/nanobind.hpp, pybind11.hpp).
//
// Include one of those two headers, not this one. Everything here runs with the GIL held, except
// the destructor of the reference a shared_stream keeps (py_ref), which takes the GIL itself.
//
// What is decided here, once for both bindings:
//
// * Reading a stream from Python (`__cuda_stream__`, as cuda.core's Stream does):
//     - a method returning (0, address): the protocol;
//     - an attribute holding (0, address), not callable: the deprecated form, accepted with a
//       DeprecationWarning (cuda.core's text); `__cuda_stream__ = None` counts as absent;
//     - (0, 0) is the legacy default stream (streamlike::from_cuda_stream_protocol);
//     - errors: no __cuda_stream__ -> TypeError naming the type and what was expected; a result
//       that is not a sequence, or holds a non-integer -> TypeError; a sequence whose length is not
//       2, a version other than 0, a negative address or one beyond 63 bits -> ValueError; an
//       exception raised inside __cuda_stream__ (or by the attribute's lookup) propagates
//       unchanged, the same exception object.
//   One shortcut, same result: torch's streams are read from their `cuda_stream` attribute instead
//   of running torch's Python-level __cuda_stream__ (which returns exactly that); see "Known
//   exporters" below for the checks, and STREAMLIKE_PYTHON_PROTOCOL_ONLY=1 to turn it off.
//   A Python int is never a stream: which stream 0, 1 or 2 names depends on the convention it was
//   written in. dlpack_stream and cai_stream decode the DLPack and __cuda_array_interface__
//   integers, explicitly.
//
// * Keeping a Python exporter alive from C++: a shared_stream made from a Python object holds a
//   strong reference to it (shared_stream::keep_alive(view, py_ref)), dropped with the last C++
//   reference. py_ref's destructor decrefs directly on a thread that holds the GIL (Python 3.12+
//   can tell cheaply) and otherwise takes it (PyGILState_Ensure), from any thread.
//   While the interpreter is finalizing, or after it has finalized, it does nothing: taking the
//   GIL then can hang or end the calling thread (Python 3.12 ends a non-main thread that asks,
//   3.14 blocks it forever), and at that point the object's memory is reclaimed with the process
//   anyway, so leaking one reference is the safe choice. The check is Py_IsFinalizing() (public
//   from Python 3.13; _Py_IsFinalizing() before) together with Py_IsInitialized(). The window
//   between the check and PyGILState_Ensure is not closed: finalization that starts in it, on
//   another thread, is the case CPython itself cannot make safe for foreign threads.
//
// * Giving a C++ stream to Python: an object of type streamlike.Stream, created here with
//   PyType_FromSpec, so neither binding needs a registration call. It implements
//   __cuda_stream__() -> (0, handle), so cuda.core's Device.create_stream(obj) consumes it, and
//   its `handle` is what torch.cuda.ExternalStream, cupy.cuda.ExternalStream and
//   numba.cuda.external_stream take. Made from a shared_stream it owns a reference (the stream
//   lives while the Python object does: `owning` is True); made from a stream_view it does not
//   (`owning` is False: a view never keeps a stream alive, in Python as in C++). An empty
//   shared_stream becomes None. A view of the handle 0 is exported as (0, 0), which every Python
//   consumer reads as the legacy default stream; a translation unit built for per-thread default
//   streams should return streamlike::resolve_default(view) instead (the casters are compiled
//   once per extension module and cannot depend on the mode without an ODR violation).
//   Each extension module gets its own streamlike.Stream type (the headers are compiled into each
//   one). Passed back to a shared_stream parameter of the module that made it, an owning Stream
//   yields its shared_stream directly (no Python call); any other module reads it through the
//   protocol, keeping it alive as any exporter.
//   The type does not take part in cyclic garbage collection: a cycle through a C++ keep-alive
//   (an exporter that refers to a Stream holding it) is not collected.
//
// Sub-interpreters are not supported (the type and an interned string are cached per process).
#ifndef STREAMLIKE_PYTHON_DETAIL_PROTOCOL_HPP
#define STREAMLIKE_PYTHON_DETAIL_PROTOCOL_HPP

#include <Python.h>
#if PY_VERSION_HEX < 0x030C0000
#  include <structmember.h> // T_LONGLONG, READONLY (in Python.h from 3.12 as Py_T_LONGLONG, Py_READONLY)
#endif

#include <streamlike/error.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_encodings.hpp>
#include <streamlike/stream_view.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#if PY_VERSION_HEX < 0x03090000
#  error "streamlike's Python bridge needs Python 3.9 or newer (PyObject_VectorcallMethod)"
#endif

namespace streamlike::python {

/// A stream given as a DLPack `__dlpack__(stream=...)` integer (CUDA devices). As a parameter of
/// a bound function it accepts None or an int and decodes it with streamlike::from_dlpack_stream:
/// None and 1 are the legacy default stream, 2 the per-thread default stream, -1 asks for no
/// synchronization (`view` is empty), 0 and other negative values raise ValueError (0 is
/// ambiguous), larger values are stream handles. A bool, a float or a stream object raise TypeError.
struct dlpack_stream {
  /// The stream to synchronize with; empty for -1 (no synchronization).
  std::optional<stream_view> view;
};

/// A stream given as the "stream" field of `__cuda_array_interface__` (version 3). As a parameter
/// it accepts None or an int and decodes it with streamlike::from_cuda_array_interface_stream:
/// None means no synchronization (`view` is empty), 1 the legacy default stream, 2 the per-thread
/// default stream, other positive values are stream handles; 0 and negative values raise ValueError.
struct cai_stream {
  /// The stream to synchronize with; empty for None (no synchronization).
  std::optional<stream_view> view;
};

namespace detail {

// ------------------------------------------------------------------------------------------------
// Small CPython helpers.

/// A Python exception taken out of the interpreter's "currently raised" slot, so that other code
/// can run (and a caster can return) before it is raised again, unchanged.
class saved_error {
public:
  saved_error() noexcept = default;
  saved_error(const saved_error&) = delete;
  saved_error& operator=(const saved_error&) = delete;
  saved_error(saved_error&& other) noexcept
      : type_(std::exchange(other.type_, nullptr)), value_(std::exchange(other.value_, nullptr)),
        traceback_(std::exchange(other.traceback_, nullptr)) {}
  saved_error& operator=(saved_error&& other) noexcept {
    saved_error(std::move(other)).swap(*this);
    return *this;
  }
  // Only ever destroyed with the GIL held (casters live inside a call from Python).
  ~saved_error() { clear(); }

  /// Takes the currently raised exception (there must be one).
  static saved_error fetch() noexcept {
    saved_error e;
#if PY_VERSION_HEX >= 0x030C0000
    e.value_ = PyErr_GetRaisedException();
#else
    PyErr_Fetch(&e.type_, &e.value_, &e.traceback_);
#endif
    return e;
  }

  [[nodiscard]] explicit operator bool() const noexcept { return type_ != nullptr || value_ != nullptr; }

  /// Raises it again, as it was; *this becomes empty.
  void restore() noexcept {
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(std::exchange(value_, nullptr));
#else
    PyErr_Restore(std::exchange(type_, nullptr), std::exchange(value_, nullptr), std::exchange(traceback_, nullptr));
#endif
  }

  void clear() noexcept {
    Py_CLEAR(type_);
    Py_CLEAR(value_);
    Py_CLEAR(traceback_);
  }

  void swap(saved_error& other) noexcept {
    std::swap(type_, other.type_);
    std::swap(value_, other.value_);
    std::swap(traceback_, other.traceback_);
  }

private:
  PyObject* type_ = nullptr; // unused from Python 3.12 on (the value carries its type and traceback)
  PyObject* value_ = nullptr;
  PyObject* traceback_ = nullptr;
};

/// An interned Python string made once per process and never freed (`slot` caches it).
[[nodiscard]] inline PyObject* interned(std::atomic<PyObject*>& slot, const char* text) noexcept {
  PyObject* name = slot.load(std::memory_order_acquire);
  if (name == nullptr) {
    name = PyUnicode_InternFromString(text);
    if (name == nullptr) return nullptr; // MemoryError is set
    PyObject* expected = nullptr;
    if (!slot.compare_exchange_strong(expected, name, std::memory_order_acq_rel)) {
      Py_DECREF(name); // another thread (free-threaded build) won the race
      name = expected;
    }
  }
  return name;
}

/// "__cuda_stream__".
[[nodiscard]] inline PyObject* cuda_stream_name() noexcept {
  static std::atomic<PyObject*> slot{nullptr};
  return interned(slot, "__cuda_stream__");
}

/// "cuda_stream": torch's stream handle attribute.
[[nodiscard]] inline PyObject* torch_handle_name() noexcept {
  static std::atomic<PyObject*> slot{nullptr};
  return interned(slot, "cuda_stream");
}

/// The short name of an object's type, for messages.
[[nodiscard]] inline const char* type_name(PyObject* obj) noexcept { return Py_TYPE(obj)->tp_name; }

/// A C++ exception thrown while making a shared_stream, as the Python exception a binding would
/// raise for it: streamlike::error (a failed CUDA call) -> RuntimeError, std::invalid_argument ->
/// ValueError, std::bad_alloc -> MemoryError, anything else -> RuntimeError.
inline void set_error_from_current_exception() noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "streamlike: unknown C++ exception while converting a CUDA stream");
  }
}

// ------------------------------------------------------------------------------------------------
// The reference a shared_stream keeps to its Python exporter.

/// True while Python objects may be touched by taking the GIL: the interpreter is initialized
/// and not finalizing (see the file comment for why finalization is skipped).
[[nodiscard]] inline bool interpreter_usable() noexcept {
  if (Py_IsInitialized() == 0) return false;
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() == 0;
#else
  return _Py_IsFinalizing() == 0;
#endif
}

/// True if the calling thread surely holds the GIL: from Python 3.12 the current thread state is
/// a thread-local variable, set only while the thread holds the GIL. Before 3.12 it is one
/// process-wide variable (and PyGILState_Check() says yes for every thread once a sub-interpreter
/// exists), so this says no and the caller takes the GIL with PyGILState_Ensure (reentrant).
[[nodiscard]] inline bool holds_gil() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
  return PyThreadState_GetUnchecked() != nullptr;
#elif PY_VERSION_HEX >= 0x030C0000
  return _PyThreadState_UncheckedGet() != nullptr;
#else
  return false;
#endif
}

/// A strong reference to a Python object, held by a shared_stream (shared_stream::keep_alive) and
/// released with its last C++ reference, from whichever thread drops it: the destructor takes the
/// GIL. During or after interpreter finalization it leaks the reference instead (file comment).
class py_ref {
public:
  /// Takes a new reference to `object`; the GIL must be held.
  explicit py_ref(PyObject* object) noexcept : object_(object) { Py_INCREF(object_); }
  py_ref(py_ref&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  py_ref(const py_ref&) = delete;
  py_ref& operator=(const py_ref&) = delete;
  py_ref& operator=(py_ref&&) = delete;
  ~py_ref() {
    if (object_ == nullptr || !interpreter_usable()) return;
    if (holds_gil()) { // the common case: dropped inside a call from Python
      Py_DECREF(object_);
      return;
    }
    const PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF(object_);
    PyGILState_Release(gil);
  }

  [[nodiscard]] PyObject* get() const noexcept { return object_; }

private:
  PyObject* object_;
};

// ------------------------------------------------------------------------------------------------
// streamlike.Stream: what a C++ stream becomes in Python.

struct stream_object {
  PyObject_HEAD
  shared_stream owner; // empty for a non-owning Stream (made from a stream_view)
  cudaStream_t handle;
};

inline std::atomic<PyTypeObject*>& stream_type_slot() noexcept {
  static std::atomic<PyTypeObject*> slot{nullptr};
  return slot;
}

/// The type if it was made already, else nullptr (never makes it: for identity checks).
[[nodiscard]] inline PyTypeObject* existing_stream_type() noexcept {
  return stream_type_slot().load(std::memory_order_acquire);
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

inline PyObject* stream_object_cuda_stream(PyObject* self, PyObject*) {
  PyObject* address = handle_to_int(as_stream_object(self)->handle);
  if (address == nullptr) return nullptr;
  PyObject* version = PyLong_FromLong(0);
  if (version == nullptr) {
    Py_DECREF(address);
    return nullptr;
  }
  PyObject* result = PyTuple_New(2);
  if (result == nullptr) {
    Py_DECREF(version);
    Py_DECREF(address);
    return nullptr;
  }
  PyTuple_SET_ITEM(result, 0, version); // steals
  PyTuple_SET_ITEM(result, 1, address);
  return result;
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

inline PyTypeObject* make_stream_type() noexcept {
  static PyMethodDef methods[] = {
      {"__cuda_stream__", &stream_object_cuda_stream,
       METH_NOARGS,
       "__cuda_stream__() -> tuple[int, int]\n\nThe CUDA Stream Protocol: (0, the cudaStream_t address)."},
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
      {0, nullptr}};
  static PyType_Spec spec = {"streamlike.Stream", static_cast<int>(sizeof(stream_object)), 0,
#if PY_VERSION_HEX >= 0x030A0000
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
#else
                             Py_TPFLAGS_DEFAULT,
#endif
                             slots};
  return reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
}

} // namespace detail

/// The type `streamlike.Stream` of this extension module (made on first use; the GIL must be
/// held). Returns nullptr with a Python exception set if it cannot be made. Expose it with e.g.
/// `m.attr("Stream") = nb::handle((PyObject*) streamlike::python::stream_type())`.
[[nodiscard]] inline PyTypeObject* stream_type() noexcept {
  auto& slot = detail::stream_type_slot();
  PyTypeObject* type = slot.load(std::memory_order_acquire);
  if (type != nullptr) return type;
  type = detail::make_stream_type();
  if (type == nullptr) return nullptr;
  PyTypeObject* expected = nullptr;
  if (!slot.compare_exchange_strong(expected, type, std::memory_order_acq_rel)) {
    Py_DECREF(type); // made concurrently (free-threaded build): keep the first
    type = expected;
  }
  return type; // one reference kept by the slot for the life of the process
}

namespace detail {

// ------------------------------------------------------------------------------------------------
// C++ -> Python.

/// A new streamlike.Stream holding `owner` (may be empty: a view) and naming `handle`; nullptr
/// with a Python exception set on failure.
[[nodiscard]] inline PyObject* new_stream_object(shared_stream owner, cudaStream_t handle) noexcept {
  PyTypeObject* type = stream_type();
  if (type == nullptr) return nullptr;
  PyObject* self = type->tp_alloc(type, 0);
  if (self == nullptr) return nullptr;
  stream_object* s = as_stream_object(self);
  ::new (static_cast<void*>(&s->owner)) shared_stream(std::move(owner));
  s->handle = handle;
  return self;
}

/// A non-owning streamlike.Stream for a view.
[[nodiscard]] inline PyObject* to_python(stream_view view) noexcept { return new_stream_object(shared_stream{}, view.get()); }

/// An owning streamlike.Stream for a shared_stream, or None for an empty one.
[[nodiscard]] inline PyObject* to_python(shared_stream stream) noexcept {
  if (!stream) Py_RETURN_NONE;
  const cudaStream_t handle = stream.get(); // cannot throw: not empty
  return new_stream_object(std::move(stream), handle);
}

// ------------------------------------------------------------------------------------------------
// Python -> C++.

/// The outcome of reading an argument.
enum class outcome {
  ok,       // converted
  declined, // not this kind of object; no Python exception is set (the binding may try others)
  failed,   // a Python exception is set: raise it
};

inline outcome fail(PyObject* type, const std::string& message) noexcept {
  PyErr_SetString(type, message.c_str());
  return outcome::failed;
}

/// What a stream parameter says about an argument that has no __cuda_stream__.
inline outcome missing_protocol(PyObject* obj, bool convert) noexcept {
  if (!convert) return outcome::declined;
  try {
    std::string message = std::string("streamlike: expected a CUDA stream: an object with a __cuda_stream__() method "
                                      "returning (0, address) (the CUDA Stream Protocol, as torch, CuPy, cuda.core "
                                      "and numba-cuda streams implement it); got an object of type '") +
                          type_name(obj) + "', which has no __cuda_stream__";
    if (PyLong_Check(obj)) {
      message += ". A Python int is not a stream: which stream 0, 1 or 2 names depends on the convention it was "
                 "written in (DLPack, __cuda_array_interface__, the CUDA runtime); pass the stream object itself";
    }
    return fail(PyExc_TypeError, message);
  } catch (...) {
    PyErr_NoMemory();
    return outcome::failed;
  }
}

/// Reads one element of the protocol's tuple as a C long long: `what` names it for messages.
/// Accepts int and objects with __index__ (numpy integers); a bool is an int in Python and passes.
inline outcome read_integer(PyObject* obj, PyObject* item, const char* what, long long& value, int& overflow) noexcept {
  PyObject* index = nullptr;
  if (PyLong_Check(item)) {
    index = item;
    Py_INCREF(index);
  } else if (PyIndex_Check(item)) {
    index = PyNumber_Index(item);
    if (index == nullptr) return outcome::failed;
  } else {
    try {
      return fail(PyExc_TypeError, std::string("streamlike: ") + type_name(obj) + ".__cuda_stream__() returned a " +
                                       what + " of type '" + type_name(item) +
                                       "'; expected an int, as in (0, address)");
    } catch (...) {
      PyErr_NoMemory();
      return outcome::failed;
    }
  }
  value = PyLong_AsLongLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  if (value == -1 && overflow == 0 && PyErr_Occurred() != nullptr) return outcome::failed;
  return outcome::ok;
}

/// repr(item) for an error message: false (with the Python error set) only if repr() itself raised.
inline bool repr_text(PyObject* item, std::string& shown) {
  PyObject* repr = PyObject_Repr(item);
  if (repr == nullptr) return false;
  const char* text = PyUnicode_AsUTF8(repr);
  shown = text != nullptr ? text : "?";
  Py_DECREF(repr);
  if (text == nullptr) PyErr_Clear();
  return true;
}

/// Decodes the address element of (0, address) (borrowed).
inline outcome decode_address(PyObject* obj, PyObject* address_item, stream_view& out) noexcept {
  try {
    long long address = 0;
    int overflow = 0;
    if (const outcome o = read_integer(obj, address_item, "stream address", address, overflow); o != outcome::ok) {
      return o;
    }
    if (overflow < 0 || (overflow == 0 && address < 0)) {
      std::string shown;
      if (!repr_text(address_item, shown)) return outcome::failed;
      return fail(PyExc_ValueError, std::string("streamlike: ") + type_name(obj) +
                                        ".__cuda_stream__ returned the negative stream address " + shown +
                                        "; expected a cudaStream_t address >= 0 (0: the legacy default stream)");
    }
    if (overflow > 0) {
      return fail(PyExc_ValueError, std::string("streamlike: ") + type_name(obj) +
                                        ".__cuda_stream__ returned a stream address beyond 2**63 - 1; expected a "
                                        "cudaStream_t address");
    }
    out = streamlike::from_cuda_stream_protocol(0, static_cast<std::int64_t>(address));
    return outcome::ok;
  } catch (...) {
    set_error_from_current_exception();
    return outcome::failed;
  }
}

/// Decodes the (version, address) that __cuda_stream__ produced (a new reference, consumed).
inline outcome decode_info(PyObject* obj, PyObject* info, stream_view& out) noexcept {
  struct release_on_exit {
    PyObject* p;
    ~release_on_exit() { Py_XDECREF(p); }
  } info_guard{info};

  PyObject* version_item = nullptr;
  PyObject* address_item = nullptr;
  struct items_guard {
    PyObject** a;
    PyObject** b;
    bool owned = false;
    ~items_guard() {
      if (owned) {
        Py_XDECREF(*a);
        Py_XDECREF(*b);
      }
    }
  } items{&version_item, &address_item};

  try {
    if (PyTuple_CheckExact(info) && PyTuple_GET_SIZE(info) == 2) { // the common case: borrowed items
      version_item = PyTuple_GET_ITEM(info, 0);
      address_item = PyTuple_GET_ITEM(info, 1);
    } else {
      if (!PySequence_Check(info) || PyUnicode_Check(info) || PyBytes_Check(info)) {
        return fail(PyExc_TypeError, std::string("streamlike: ") + type_name(obj) +
                                         ".__cuda_stream__ must return a sequence of 2 ints (version, address), got "
                                         "an object of type '" + type_name(info) + "'");
      }
      const Py_ssize_t size = PySequence_Size(info);
      if (size < 0) return outcome::failed;
      if (size != 2) {
        return fail(PyExc_ValueError, std::string("streamlike: ") + type_name(obj) +
                                          ".__cuda_stream__ must return a sequence of 2 ints (version, address), got " +
                                          std::to_string(size) + " element(s)");
      }
      items.owned = true;
      version_item = PySequence_GetItem(info, 0);
      if (version_item == nullptr) return outcome::failed;
      address_item = PySequence_GetItem(info, 1);
      if (address_item == nullptr) return outcome::failed;
    }

    long long version = 0;
    int overflow = 0;
    if (const outcome o = read_integer(obj, version_item, "version", version, overflow); o != outcome::ok) return o;
    if (overflow != 0 || version != 0) {
      std::string shown;
      if (!repr_text(version_item, shown)) return outcome::failed;
      return fail(PyExc_ValueError, std::string("streamlike: ") + type_name(obj) +
                                        ".__cuda_stream__ returned protocol version " + shown +
                                        "; only version 0 is defined, as in (0, address)");
    }

    return decode_address(obj, address_item, out);
  } catch (...) {
    set_error_from_current_exception();
    return outcome::failed;
  }
}

// ------------------------------------------------------------------------------------------------
// Known exporters: reading the handle without running __cuda_stream__.
//
// torch.cuda.Stream (and ExternalStream) implement the protocol in Python:
//     def __cuda_stream__(self): return (0, self.cuda_stream)
// Calling a Python function from C costs a new interpreter frame (about as much as the whole
// bound call otherwise), so for an object whose class's __cuda_stream__ is that very function
// (checked: a Python function whose __module__ is "torch.cuda.streams" and __qualname__
// "Stream.__cuda_stream__") the handle is read from `cuda_stream` directly, which is what the
// method returns. The verdict is cached per type, keyed on the type's version tag, so replacing
// the method on the class (or a base) is noticed; a subclass that overrides it is not torch's.
// Not noticed: an instance attribute named __cuda_stream__ shadowing the method on one torch
// stream object. Anything unexpected (no `cuda_stream`, not an int) falls back to calling the
// method.
//
// torch's `cuda_stream` getter itself costs about as much as the rest of a bound call (~50 ns of
// a ~130 ns pybind11 call on the H200 host: it sets up torch's error and warning handling). But a
// torch stream is identified by three integers its object stores, `device_type`, `device_index`
// and `stream_id` (c10::Stream; torch compares streams by them), and the CUDA stream is a function
// of those alone, fixed for the process (pool streams are made once and never destroyed; an
// external stream's id is its handle). So the handles of the last few torch streams are
// remembered by that key, read straight from the object at the offsets its type publishes
// (read-only `long long` member descriptors, the way CPython itself reads them); a type that does
// not publish all three that way gets the getter each time. Keying on the object (with a weak
// reference to tell a new object at a freed one's address) cannot work: torch 2.11's stream
// objects do not clear the weak references to them when freed (bench/RESULTS.md shows one).
//
// Set STREAMLIKE_PYTHON_PROTOCOL_ONLY=1 in the environment (read once) to always call the method.
// Free-threaded builds always call it (the caches rely on the GIL). CuPy's, cuda.core's and RMM's
// methods are compiled (Cython): calling them from C is already cheap.

[[nodiscard]] inline bool known_exporters_enabled() noexcept {
  static const bool enabled = [] {
    const char* value = std::getenv("STREAMLIKE_PYTHON_PROTOCOL_ONLY");
    return value == nullptr || value[0] == '\0' || (value[0] == '0' && value[1] == '\0');
  }();
  return enabled;
}

[[nodiscard]] inline bool attribute_is(PyObject* obj, const char* attribute, const char* expected) noexcept {
  PyObject* value = PyObject_GetAttrString(obj, attribute);
  if (value == nullptr) {
    PyErr_Clear();
    return false;
  }
  const bool equal = PyUnicode_Check(value) && PyUnicode_CompareWithASCIIString(value, expected) == 0;
  Py_DECREF(value);
  return equal;
}

/// Whether the class's own __cuda_stream__ is torch's. Looking it up on the type also gives the
/// type a version tag (CPython assigns them on lookup).
[[nodiscard]] inline bool has_torch_method(PyTypeObject* type, PyObject* name) noexcept {
  PyObject* method = PyObject_GetAttr(reinterpret_cast<PyObject*>(type), name);
  if (method == nullptr) {
    PyErr_Clear();
    return false;
  }
  const bool torch = PyFunction_Check(method) && attribute_is(method, "__module__", "torch.cuda.streams") &&
                     attribute_is(method, "__qualname__", "Stream.__cuda_stream__");
  Py_DECREF(method);
  return torch;
}

/// Where a torch stream object keeps the three integers that identify its stream.
struct torch_stream_layout {
  Py_ssize_t device_type = -1; // byte offsets into the object; -1: not published
  Py_ssize_t device_index = -1;
  Py_ssize_t stream_id = -1;

  [[nodiscard]] bool known() const noexcept { return device_type >= 0 && device_index >= 0 && stream_id >= 0; }
};

// PyMemberDef's codes for a `long long` member and for read-only (other names before 3.12).
#if PY_VERSION_HEX >= 0x030C0000
inline constexpr int long_long_member = Py_T_LONGLONG;
inline constexpr int read_only_member = Py_READONLY;
#else
inline constexpr int long_long_member = T_LONGLONG;
inline constexpr int read_only_member = READONLY;
#endif

/// The offset of a read-only `long long` member `attribute` of `type`, or -1.
[[nodiscard]] inline Py_ssize_t long_long_member_offset(PyTypeObject* type, const char* attribute) noexcept {
  PyObject* descriptor = PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), attribute);
  if (descriptor == nullptr) {
    PyErr_Clear();
    return -1;
  }
  Py_ssize_t offset = -1;
  if (Py_TYPE(descriptor) == &PyMemberDescr_Type) { // a data descriptor: no instance can shadow it
    const PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(descriptor)->d_member;
    if (member->type == long_long_member && (member->flags & read_only_member) != 0 && member->offset >= 0) {
      offset = member->offset;
    }
  }
  Py_DECREF(descriptor);
  return offset;
}

/// How to read the handle of an object of one type.
struct exporter_reader {
  bool torch = false;          // read `cuda_stream` instead of calling __cuda_stream__
  torch_stream_layout layout;  // if known: remember handles by the stream's key
};

[[nodiscard]] inline exporter_reader classify_type(PyTypeObject* type, PyObject* name) noexcept {
  exporter_reader reader;
  if (!has_torch_method(type, name)) return reader;
  reader.torch = true;
  reader.layout = {long_long_member_offset(type, "device_type"), long_long_member_offset(type, "device_index"),
                   long_long_member_offset(type, "stream_id")};
  return reader;
}

/// The reader for `obj`'s type, cached for a few types (each cached type is kept alive by the
/// cache, so its address cannot be reused by another type while cached).
[[nodiscard]] inline exporter_reader reader_for(PyObject* obj, PyObject* name) noexcept {
#if defined(Py_GIL_DISABLED)
  (void)obj;
  (void)name;
  return {};
#else
  if (!known_exporters_enabled()) return {};
  struct entry {
    PyTypeObject* type = nullptr; // strong reference
    unsigned int version = 0;
    exporter_reader reader;
  };
  constexpr unsigned slots = 8;
  static entry cache[slots];
  static unsigned next = 0;

  PyTypeObject* type = Py_TYPE(obj);
  entry* slot = nullptr;
  for (entry& e : cache) {
    if (e.type == type) {
      if (e.version != 0 && e.version == type->tp_version_tag) return e.reader;
      slot = &e; // the type changed since: classify again, in place
      break;
    }
  }
  const exporter_reader reader = classify_type(type, name);
  const unsigned int version = type->tp_version_tag;
  if (version == 0) return reader; // no tag to key on: not cached
  if (slot == nullptr) {
    slot = &cache[next];
    next = (next + 1) % slots;
    PyTypeObject* evicted = std::exchange(slot->type, nullptr);
    Py_INCREF(type);
    slot->type = type;
    Py_XDECREF(evicted); // after the slot is consistent: a type's deallocation may run Python code
  }
  slot->version = version;
  slot->reader = reader;
  return reader;
#endif
}

/// torch's handle, read from `cuda_stream`; `declined` (nothing set) if that does not work out,
/// so the caller calls the method instead.
[[nodiscard]] inline outcome read_torch_attribute(PyObject* obj, stream_view& out) noexcept {
  PyObject* name = torch_handle_name();
  if (name == nullptr) {
    PyErr_Clear();
    return outcome::declined;
  }
  PyObject* handle = PyObject_GetAttr(obj, name);
  if (handle == nullptr || !PyLong_CheckExact(handle)) {
    Py_XDECREF(handle);
    PyErr_Clear();
    return outcome::declined;
  }
  const outcome o = decode_address(obj, handle, out);
  Py_DECREF(handle);
  return o;
}

/// The stream views of the last few torch streams read, by torch's key for the stream (see
/// "Known exporters"). Used with the GIL held, on GIL builds only.
class torch_view_cache {
public:
  struct key {
    long long device_type;
    long long device_index;
    long long stream_id;
    friend bool operator==(const key&, const key&) = default;
  };

  [[nodiscard]] static key key_of(PyObject* obj, const torch_stream_layout& layout) noexcept {
    const char* base = reinterpret_cast<const char*>(obj);
    const auto at = [base](Py_ssize_t offset) {
      long long value;
      std::memcpy(&value, base + offset, sizeof value);
      return value;
    };
    return {at(layout.device_type), at(layout.device_index), at(layout.stream_id)};
  }

  [[nodiscard]] bool find(const key& k, stream_view& out) const noexcept {
    for (unsigned i = 0; i < used_; ++i) {
      if (entries_[i].k == k) {
        out = entries_[i].view;
        return true;
      }
    }
    return false;
  }

  void remember(const key& k, stream_view view) noexcept {
    entries_[next_] = {k, view};
    next_ = (next_ + 1) % slots;
    if (used_ < slots) ++used_;
  }

private:
  static constexpr unsigned slots = 8;
  struct entry {
    key k{};
    stream_view view = stream_view::legacy_default();
  };
  entry entries_[slots];
  unsigned used_ = 0;
  unsigned next_ = 0;
};

[[nodiscard]] inline torch_view_cache& torch_views() noexcept {
  static torch_view_cache cache;
  return cache;
}

/// torch's handle: remembered by the stream's key if the type publishes it, else read from
/// `cuda_stream`; `declined` (nothing set) if that does not work out, so the caller calls the
/// method instead.
[[nodiscard]] inline outcome read_torch_handle(PyObject* obj, const torch_stream_layout& layout,
                                               stream_view& out) noexcept {
  if (!layout.known()) return read_torch_attribute(obj, out);
  torch_view_cache& remembered = torch_views();
  const torch_view_cache::key k = torch_view_cache::key_of(obj, layout);
  if (remembered.find(k, out)) return outcome::ok;
  const outcome o = read_torch_attribute(obj, out);
  if (o == outcome::ok) remembered.remember(k, out);
  return o;
}

/// Reads a stream view from any object with __cuda_stream__. `convert`: whether the binding is in
/// its implicit-conversion pass (only then does a missing __cuda_stream__ raise TypeError; before,
/// it declines, so that other overloads can match exactly first).
inline outcome decode_view(PyObject* obj, bool convert, stream_view& out) noexcept {
  // Our own streamlike.Stream: no Python call.
  if (PyTypeObject* own = existing_stream_type(); own != nullptr && Py_TYPE(obj) == own) {
    out = stream_view{as_stream_object(obj)->handle};
    return outcome::ok;
  }
  PyObject* name = cuda_stream_name();
  if (name == nullptr) return outcome::failed;

  if (const exporter_reader reader = reader_for(obj, name); reader.torch) {
    if (const outcome o = read_torch_handle(obj, reader.layout, out); o != outcome::declined) return o;
  }

  // The protocol: a method, called without making a bound method object.
  PyObject* call_args[2] = {nullptr, obj}; // slot 0 free for PY_VECTORCALL_ARGUMENTS_OFFSET
  PyObject* info =
      PyObject_VectorcallMethod(name, call_args + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
  if (info == nullptr) {
    // Tell apart: no __cuda_stream__ at all, the deprecated attribute form (not callable), and an
    // exception raised inside the method (which must propagate unchanged).
    saved_error first = saved_error::fetch();
    PyObject* attribute = PyObject_GetAttr(obj, name);
    if (attribute == nullptr) {
      if (PyErr_ExceptionMatches(PyExc_AttributeError) != 0) {
        PyErr_Clear();
        return missing_protocol(obj, convert);
      }
      PyErr_Clear(); // the lookup itself raised (a property): raise what it raised the first time
      first.restore();
      return outcome::failed;
    }
    if (attribute == Py_None) { // `__cuda_stream__ = None` opts out, like `__hash__ = None`
      Py_DECREF(attribute);
      return missing_protocol(obj, convert);
    }
    if (PyCallable_Check(attribute) != 0) { // it was called and raised: propagate that, unchanged
      Py_DECREF(attribute);
      first.restore();
      return outcome::failed;
    }
    first.clear(); // "'tuple' object is not callable": the deprecated attribute form
    if (PyErr_WarnEx(PyExc_DeprecationWarning,
                     "Implementing __cuda_stream__ as an attribute is deprecated; it must be implemented as a method",
                     1) < 0) {
      Py_DECREF(attribute); // warnings turned into errors
      return outcome::failed;
    }
    info = attribute;
  }
  return decode_info(obj, info, out);
}

/// Reads a shared_stream from any object with __cuda_stream__: it holds a strong reference to the
/// object until its last C++ reference drops. Our own owning streamlike.Stream shares its stream.
inline outcome decode_shared(PyObject* obj, bool convert, shared_stream& out) noexcept {
  if (PyTypeObject* own = existing_stream_type(); own != nullptr && Py_TYPE(obj) == own) {
    stream_object* s = as_stream_object(obj);
    if (s->owner) {
      out = s->owner; // one atomic increment
      return outcome::ok;
    }
  }
  stream_view view = stream_view::legacy_default();
  if (const outcome o = decode_view(obj, convert, view); o != outcome::ok) return o;
  try {
    // Queries the stream's facts (device, id, ...) except for the default streams: a CUDA error
    // here (a handle that names no live stream) becomes RuntimeError.
    out = shared_stream::keep_alive(view, py_ref(obj));
    return outcome::ok;
  } catch (...) {
    set_error_from_current_exception();
    return outcome::failed;
  }
}

/// Reads None or an int for dlpack_stream / cai_stream. A bool is refused: True is not a stream.
inline outcome decode_stream_integer(PyObject* obj, bool convert, const char* convention,
                                     std::optional<std::int64_t>& out) noexcept {
  if (obj == Py_None) {
    out.reset();
    return outcome::ok;
  }
  if (!PyLong_Check(obj) || PyBool_Check(obj)) {
    if (!convert) return outcome::declined;
    try {
      return fail(PyExc_TypeError, std::string("streamlike: expected a ") + convention +
                                       " stream integer (an int or None), got an object of type '" + type_name(obj) +
                                       "'");
    } catch (...) {
      PyErr_NoMemory();
      return outcome::failed;
    }
  }
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (value == -1 && overflow == 0 && PyErr_Occurred() != nullptr) return outcome::failed;
  if (overflow != 0) {
    try {
      return fail(PyExc_ValueError, std::string("streamlike: ") + convention +
                                        ": invalid stream value (out of the 64-bit range); expected a stream handle");
    } catch (...) {
      PyErr_NoMemory();
      return outcome::failed;
    }
  }
  out = static_cast<std::int64_t>(value);
  return outcome::ok;
}

inline outcome decode_dlpack(PyObject* obj, bool convert, dlpack_stream& out) noexcept {
  std::optional<std::int64_t> value;
  if (const outcome o = decode_stream_integer(obj, convert, "DLPack __dlpack__(stream=)", value); o != outcome::ok) {
    return o;
  }
  try {
    out.view = streamlike::from_dlpack_stream(value); // std::invalid_argument -> ValueError
    return outcome::ok;
  } catch (...) {
    set_error_from_current_exception();
    return outcome::failed;
  }
}

inline outcome decode_cai(PyObject* obj, bool convert, cai_stream& out) noexcept {
  std::optional<std::int64_t> value;
  if (const outcome o = decode_stream_integer(obj, convert, "__cuda_array_interface__ \"stream\"", value);
      o != outcome::ok) {
    return o;
  }
  try {
    out.view = streamlike::from_cuda_array_interface_stream(value);
    return outcome::ok;
  } catch (...) {
    set_error_from_current_exception();
    return outcome::failed;
  }
}

} // namespace detail
} // namespace streamlike::python

#endif // STREAMLIKE_PYTHON_DETAIL_PROTOCOL_HPP
