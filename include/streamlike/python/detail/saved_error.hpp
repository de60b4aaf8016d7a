// streamlike/python/detail/saved_error.hpp: a Python exception taken out of the interpreter's
// "currently raised" slot, so that other code can run (and a caster can return) before it is
// raised again, unchanged.
#ifndef STREAMLIKE_PYTHON_DETAIL_SAVED_ERROR_HPP
#define STREAMLIKE_PYTHON_DETAIL_SAVED_ERROR_HPP

#include <streamlike/python/detail/cpython.hpp>

#include <utility>

namespace streamlike::python::detail {

/// A Python exception held by C++ until it is raised again (restore) or dropped (clear).
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

  /// Takes the currently raised exception; with none raised it holds none, and restore() then
  /// leaves none raised.
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

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_SAVED_ERROR_HPP
