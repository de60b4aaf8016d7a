// The current stream's bindings in the streamlike package (docs/current-stream.md): current_stream(),
// the provider list and conflicts, the check's switch, and the capsule through which other extension
// modules ask this copy of libstreamlike (streamlike/python/stream_or_current.hpp). `use` is in
// use.cpp, CuPy's provider in cupy_provider.cpp, torch's stream object in torch_stream.cpp.
//
// bind_current_stream(m) adds them to the _streamlike module.
#include "package.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_check.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/python/detail/translate_exceptions.hpp>
#include <streamlike/python/nanobind.hpp>
#include <streamlike/python/stream_or_current.hpp>

#include <optional>

namespace nb = nanobind;
namespace sd = streamlike::python::detail;
using streamlike::stream_view;

namespace {

// --- Arguments and results ---------------------------------------------------------------------

/// `device`: None or absent (the current device) or an int >= 0, read by the package's
/// read_device. Sets a Python exception and returns false otherwise.
bool read_device_or_current(const char* function, PyObject* arg, int& device) noexcept {
  std::optional<int> ordinal;
  if (!streamlike_package::read_device(function, arg != nullptr ? arg : Py_None, ordinal)) return false;
  device = ordinal.value_or(streamlike::current_device);
  return true;
}

/// current_stream(device=None) -> StreamView
PyObject* py_current_stream(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) noexcept {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject* device_arg = nullptr;
  if (nargs + nkw > 1) {
    PyErr_Format(PyExc_TypeError, "current_stream() takes at most 1 argument (device), got %zd", nargs + nkw);
    return nullptr;
  }
  if (nargs == 1) device_arg = args[0];
  if (nkw == 1) {
    if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "device") != 0) {
      PyErr_Format(PyExc_TypeError, "current_stream() got an unexpected keyword argument '%U'",
                   PyTuple_GET_ITEM(kwnames, 0));
      return nullptr;
    }
    device_arg = args[0];
  }
  int device = 0;
  if (!read_device_or_current("current_stream", device_arg, device)) return nullptr;
  streamlike_package::register_cupy_if_loaded();
  streamlike_package::register_dlpack_torch_if_needed();
  std::optional<stream_view> current;
  try {
    current = streamlike::current_stream(device);
  } catch (...) {
    sd::set_error_from_current_exception();
    return nullptr;
  }
  return streamlike_package::new_view(*current, nullptr, "current");
}

} // namespace

namespace streamlike_package {

void bind_current_stream(nb::module_& m) {
  static PyMethodDef current_stream_def = {
      "current_stream", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&py_current_stream)),
      METH_FASTCALL | METH_KEYWORDS,
      "current_stream(device=None) -> StreamView: the calling thread's current stream on `device` (default: the "
      "current device), as torch, tvm-ffi, CuPy and streamlike.use agree on it (docs/current-stream.md)."};
  PyObject* function = PyCFunction_NewEx(&current_stream_def, nullptr, m.attr("__name__").ptr());
  if (function == nullptr) throw nb::python_error();
  m.attr("current_stream") = nb::steal(function);

  bind_use(m);
  bind_dlpack_exchange(m);
  m.attr("use").attr("__module__") = "streamlike";

  m.def(
      "_register_cupy_if_loaded", []() { streamlike_package::register_cupy_if_loaded(); },
      "Registers CuPy's current-stream provider once `cupy` is imported (the package's import hook calls it).");
  m.def(
      "current_stream_providers",
      []() {
        streamlike_package::register_cupy_if_loaded();
        streamlike_package::register_dlpack_torch_if_needed();
        nb::list names;
        for (const auto& p : streamlike::current_stream_providers()) names.append(nb::str(p.name.c_str()));
        return names;
      },
      "The names of the current-stream providers, in the order current_stream() asks them.");
  m.def(
      "current_stream_conflicts",
      [](nb::handle device_arg) {
        int device = 0;
        if (!read_device_or_current("current_stream_conflicts", device_arg.ptr(), device)) throw nb::python_error();
        streamlike_package::register_cupy_if_loaded();
        streamlike_package::register_dlpack_torch_if_needed();
        nb::list out;
        for (const auto& answer : streamlike::current_stream_conflicts(device)) {
          PyObject* view = streamlike_package::new_view(answer.stream, nullptr, "current");
          if (view == nullptr) throw nb::python_error();
          out.append(nb::make_tuple(nb::str(answer.provider.c_str()), nb::steal(view)));
        }
        return out;
      },
      nb::arg("device").none() = nb::none(),
      "[(provider, StreamView)] when the providers' current streams on `device` disagree, the one current_stream() "
      "returns first; [] when they agree.");
  m.def(
      "set_current_stream_check", [](bool on) { streamlike::set_current_stream_check(on); }, nb::arg("on"),
      "Turns on (or off) the check that reports, once per call site, a stream argument that is not the current "
      "stream (also: STREAMLIKE_CHECK_CURRENT_STREAM=1).");
  m.def(
      "current_stream_check_enabled", []() { return streamlike::current_stream_check_enabled(); },
      "Whether the current-stream check is on.");
}

} // namespace streamlike_package
