// streamlike/python/detail/py_ref.hpp: the strong reference a shared_stream keeps to the Python
// object it was read from, released from whichever thread drops the last C++ reference
// (docs/python-bridge.md, "Keeping a Python exporter alive from C++").
#ifndef STREAMLIKE_PYTHON_DETAIL_PY_REF_HPP
#define STREAMLIKE_PYTHON_DETAIL_PY_REF_HPP

#include <streamlike/python/detail/cpython.hpp>

#include <utility>

namespace streamlike::python::detail {

/// True while Python objects may be touched by taking the GIL: the interpreter is initialized
/// and not finalizing (taking the GIL during finalization can hang or end the calling thread).
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
/// released with its last C++ reference, from any thread: the destructor takes the GIL if the
/// thread does not hold it. During or after interpreter finalization it leaks the reference
/// instead (the process reclaims the memory; taking the GIL then is unsafe).
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

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_PY_REF_HPP
