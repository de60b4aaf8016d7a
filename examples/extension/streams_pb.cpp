// The example module with pybind11: streams_pb (docs/python-extensions.md).
#include "streams_functions.hpp"

#include <streamlike/python/pybind11.hpp>

PYBIND11_MODULE(streams_pb, m) {
  m.def("handle", &example::handle, pybind11::arg("stream"));
  m.def("keep", &example::keep, pybind11::arg("stream"));
  m.def("kept", &example::kept);
  m.def("release", &example::release);
  m.def("use_count", &example::use_count, pybind11::arg("stream"));
  m.def("legacy_default", &example::legacy_default);
  m.def("create", &example::create);
  // The Python type of returned streams: the streamlike package's Stream where it is importable.
  m.attr("Stream") =
      pybind11::reinterpret_borrow<pybind11::object>(reinterpret_cast<PyObject*>(streamlike::python::stream_type()));
}
