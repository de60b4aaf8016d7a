// streamlike/python/detail/check_given_stream.hpp: the current-stream check at the casters' entry
// points (streamlike/current_stream_check.hpp): a stream argument that is not the caller's current
// stream is reported once per Python call site, while the check is on in this module's copy or in
// the streamlike package. Off, it costs a relaxed load and, with the package loaded, a call
// through its table (without it, a read of sys.modules' size).
#ifndef STREAMLIKE_PYTHON_DETAIL_CHECK_GIVEN_STREAM_HPP
#define STREAMLIKE_PYTHON_DETAIL_CHECK_GIVEN_STREAM_HPP

#include <streamlike/current_stream_check.hpp>
#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/package_current_stream.hpp>
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

/// The check of a stream argument; the call site is the Python caller's. On with this module's
/// own switch or the streamlike package's (check_active). Never throws.
inline void check_given_stream(stream_view given) noexcept {
  if (!check_active()) [[likely]]
    return;
  try {
    const std::string site = python_call_site();
    streamlike::detail::report_if_not_current(given, site.c_str());
  } catch (...) {
    // out of memory: not checked
  }
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_CHECK_GIVEN_STREAM_HPP
