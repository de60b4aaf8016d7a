// streamlike/python/detail/cpython.hpp: Python.h and the small CPython helpers the bridge shares
// (an owned reference, interned names, type names). Everything here needs the GIL.
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
class owned_object {
public:
  owned_object() noexcept = default;
  owned_object(const owned_object&) = delete;
  owned_object& operator=(const owned_object&) = delete;
  owned_object(owned_object&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  owned_object& operator=(owned_object&& other) noexcept {
    owned_object(std::move(other)).swap(*this);
    return *this;
  }
  ~owned_object() { Py_XDECREF(object_); }

  /// Takes over a new reference (may be nullptr).
  [[nodiscard]] static owned_object steal(PyObject* object) noexcept { return owned_object(object); }
  /// Takes a new reference to a borrowed object (may be nullptr).
  [[nodiscard]] static owned_object borrow(PyObject* object) noexcept {
    Py_XINCREF(object);
    return owned_object(object);
  }

  [[nodiscard]] PyObject* get() const noexcept { return object_; }
  [[nodiscard]] explicit operator bool() const noexcept { return object_ != nullptr; }
  void swap(owned_object& other) noexcept { std::swap(object_, other.object_); }

private:
  explicit owned_object(PyObject* object) noexcept : object_(object) {}
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
