// streamlike/python/detail/py_ref.hpp: releasing Python references from any thread, holding the GIL
// (drop_with_gil), and a strong reference that does so when destroyed (py_ref) (docs/python-bridge.md,
// "Keeping a Python exporter alive from C++").
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

/// Runs `drop`, which releases Python objects, holding the GIL: directly on a thread that holds it
/// (the common case: a call from Python), else taking it with PyGILState_Ensure. Not at all while
/// the interpreter finalizes or after it has (taking the GIL then can hang or end the thread; the
/// process reclaims what is leaked). A thread that holds the GIL during finalization is the one
/// finalizing, running Python's own teardown, and may drop references as that teardown does.
template <class Drop>
void drop_with_gil(Drop&& drop) noexcept {
  if (holds_gil()) {
    drop();
    return;
  }
  if (!interpreter_usable()) return;
  const PyGILState_STATE gil = PyGILState_Ensure();
  drop();
  PyGILState_Release(gil);
}

/// A strong reference to a Python object, released with the object that holds it from any thread
/// (drop_with_gil): what retain_until_done(stream, py_ref(obj)) keeps until the stream's work is
/// done. A shared_stream read from a Python object holds its reference in a reference_block.
class py_ref {
public:
  /// Takes a new reference to `object`; the GIL must be held.
  explicit py_ref(PyObject* object) noexcept : object_(object) { Py_INCREF(object_); }
  py_ref(py_ref&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  py_ref(const py_ref&) = delete;
  py_ref& operator=(const py_ref&) = delete;
  py_ref& operator=(py_ref&&) = delete;
  ~py_ref() {
    if (object_ != nullptr) drop_with_gil([this] { Py_DECREF(object_); });
  }

  [[nodiscard]] PyObject* get() const noexcept { return object_; }

private:
  PyObject* object_;
};

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_PY_REF_HPP
