// streamlike/python/detail/cpython.hpp: Python.h and the small CPython helpers the bridge shares
// (a scoped strong reference, interned names, type names). Everything here needs the GIL.
#ifndef STREAMLIKE_PYTHON_DETAIL_CPYTHON_HPP
#define STREAMLIKE_PYTHON_DETAIL_CPYTHON_HPP

#include <Python.h>

#include <atomic>
#include <utility>

#if PY_VERSION_HEX < 0x03090000
#  error "streamlike's Python bridge needs Python 3.9 or newer (PyObject_VectorcallMethod)"
#endif

namespace streamlike::python::detail {

/// A strong reference, released when this is destroyed. Only for code that holds the GIL for
/// the reference's whole life (a caster's call); py_ref is the one that may outlive it.
class scoped_ref {
public:
  scoped_ref() noexcept = default;
  scoped_ref(const scoped_ref&) = delete;
  scoped_ref& operator=(const scoped_ref&) = delete;
  scoped_ref(scoped_ref&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  scoped_ref& operator=(scoped_ref&& other) noexcept {
    scoped_ref(std::move(other)).swap(*this);
    return *this;
  }
  ~scoped_ref() { Py_XDECREF(object_); }

  /// Takes over a new reference (may be nullptr).
  [[nodiscard]] static scoped_ref steal(PyObject* object) noexcept { return scoped_ref(object); }
  /// Takes a new reference to a borrowed object (may be nullptr).
  [[nodiscard]] static scoped_ref borrow(PyObject* object) noexcept {
    Py_XINCREF(object);
    return scoped_ref(object);
  }

  [[nodiscard]] PyObject* get() const noexcept { return object_; }
  [[nodiscard]] explicit operator bool() const noexcept { return object_ != nullptr; }
  void swap(scoped_ref& other) noexcept { std::swap(object_, other.object_); }

private:
  explicit scoped_ref(PyObject* object) noexcept : object_(object) {}
  PyObject* object_ = nullptr;
};

/// An interned Python string made once per process and never freed (`slot` caches it); nullptr
/// with MemoryError set if it cannot be made.
[[nodiscard]] inline PyObject* interned(std::atomic<PyObject*>& slot, const char* text) noexcept {
  PyObject* name = slot.load(std::memory_order_acquire);
  if (name == nullptr) {
    name = PyUnicode_InternFromString(text);
    if (name == nullptr) return nullptr;
    PyObject* expected = nullptr;
    if (!slot.compare_exchange_strong(expected, name, std::memory_order_acq_rel)) {
      Py_DECREF(name); // another thread (free-threaded build) won the race
      name = expected;
    }
  }
  return name;
}

/// "__cuda_stream__", interned.
[[nodiscard]] inline PyObject* cuda_stream_name() noexcept {
  static std::atomic<PyObject*> slot{nullptr};
  return interned(slot, "__cuda_stream__");
}

/// "__cuda_stream_owned__", interned.
[[nodiscard]] inline PyObject* cuda_stream_owned_name() noexcept {
  static std::atomic<PyObject*> slot{nullptr};
  return interned(slot, "__cuda_stream_owned__");
}

/// The name of an object's type, for messages.
[[nodiscard]] inline const char* type_name(PyObject* obj) noexcept { return Py_TYPE(obj)->tp_name; }

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_CPYTHON_HPP
