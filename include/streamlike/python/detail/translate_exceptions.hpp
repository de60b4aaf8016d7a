// streamlike/python/detail/translate_exceptions.hpp: the one place where a C++ exception thrown
// inside a caster becomes a Python exception (casters report failure, they never throw).
#ifndef STREAMLIKE_PYTHON_DETAIL_TRANSLATE_EXCEPTIONS_HPP
#define STREAMLIKE_PYTHON_DETAIL_TRANSLATE_EXCEPTIONS_HPP

#include <streamlike/python/detail/cpython.hpp>

#include <exception>
#include <new>
#include <stdexcept>
#include <utility>

namespace streamlike::python::detail {

/// Sets the exception being handled (call it inside a catch block) as the Python exception a
/// binding would raise for it: std::bad_alloc -> MemoryError, std::invalid_argument -> ValueError,
/// any other std::exception (streamlike::error: a failed CUDA call) -> RuntimeError with its
/// what(), anything else -> RuntimeError.
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

/// Runs `f()` and returns what it returns. If it throws, the exception becomes the Python
/// exception (set_error_from_current_exception) and `on_exception` is returned instead.
template <class Result, class F>
[[nodiscard]] Result translate_exceptions(Result on_exception, F&& f) noexcept {
  try {
    return std::forward<F>(f)();
  } catch (...) {
    set_error_from_current_exception();
    return on_exception;
  }
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_TRANSLATE_EXCEPTIONS_HPP
