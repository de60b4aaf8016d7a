// streamlike/python/detail/check_given_stream.hpp: the current-stream check at the casters' entry
// points (streamlike/current_stream_check.hpp): a stream argument that is not the caller's current
// stream is reported once per Python call site, while the check is on. Off, it costs one relaxed
// load.
#ifndef STREAMLIKE_PYTHON_DETAIL_CHECK_GIVEN_STREAM_HPP
#define STREAMLIKE_PYTHON_DETAIL_CHECK_GIVEN_STREAM_HPP

#include <streamlike/current_stream_check.hpp>
#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/stream_view.hpp>

#include <string>

namespace streamlike::python::detail {

/// "file:line" of the Python code that called the binding ("<unknown>" without a Python frame).
/// GIL held.
[[nodiscard]] inline std::string python_call_site() {
  PyFrameObject* frame = PyEval_GetFrame(); // borrowed
  if (frame == nullptr) return "<unknown>";
  PyCodeObject* code = PyFrame_GetCode(frame); // new reference
  const int line = PyFrame_GetLineNumber(frame);
  std::string file = "<unknown>";
  if (code != nullptr) {
    PyObject* name = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_filename");
    if (name != nullptr) {
      if (const char* text = PyUnicode_AsUTF8(name)) file = text;
      Py_DECREF(name);
    }
    Py_DECREF(code);
  }
  PyErr_Clear();
  return file + ":" + std::to_string(line);
}

/// The check of a stream argument; the call site is the Python caller's. Never throws.
inline void check_given_stream(stream_view given) noexcept {
  if (!streamlike::detail::current_stream_check_on.load(std::memory_order_relaxed)) [[likely]]
    return;
  try {
    const std::string site = python_call_site();
    streamlike::check_current_stream(given, site.c_str());
  } catch (...) {
    // out of memory: not checked
  }
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_CHECK_GIVEN_STREAM_HPP
