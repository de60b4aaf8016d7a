// The example module with nanobind: streams_nb (docs/python-extensions.md).
#include "streams_functions.hpp"

#include <streamlike/python/nanobind.hpp>

NB_MODULE(streams_nb, m) {
  m.def("handle", &example::handle, nanobind::arg("stream"));
  m.def("keep", &example::keep, nanobind::arg("stream"));
  m.def("kept", &example::kept);
  m.def("release", &example::release);
  m.def("use_count", &example::use_count, nanobind::arg("stream"));
  m.def("legacy_default", &example::legacy_default);
  m.def("create", &example::create);
  // The Python type of returned streams: the streamlike package's Stream where it is importable.
  m.attr("Stream") = nanobind::borrow(reinterpret_cast<PyObject*>(streamlike::python::stream_type()));
}
