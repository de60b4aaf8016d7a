// The pybind11 current-stream test module: current_stream_functions.hpp bound with
// streamlike/python/pybind11_current_stream.hpp.
#include <streamlike/python/pybind11_current_stream.hpp>

#include <pybind11/stl.h>

#include "current_stream_functions.hpp"

namespace py = pybind11;

PYBIND11_MODULE(streamlike_current_pb_test, m) {
  current_test::bind_common(m);
  m.def("stream_arg", &current_test::stream_arg, py::arg("stream") = py::none());
  m.def("memset_on", &current_test::memset_on, py::arg("address"), py::arg("nbytes"), py::arg("value"),
        py::arg("stream") = py::none());
  m.def("current_inside_scope", &current_test::current_inside_scope, py::arg("stream"));
  m.def("call_inside_scope", &current_test::call_inside_scope<py::object>, py::arg("stream"), py::arg("inside"),
        py::arg("device") = 0);
}
