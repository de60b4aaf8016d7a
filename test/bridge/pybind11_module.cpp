// The pybind11 test module: bridge_functions.hpp bound with streamlike/python/pybind11.hpp.
#include <streamlike/python/pybind11.hpp>

#include <pybind11/stl.h>

#include "bridge_functions.hpp"
#include "capture_functions.hpp"
#include "route_functions.hpp"

namespace py = pybind11;

PYBIND11_MODULE(streamlike_pb_test, m) {
  bridge_test::bind_all(m);
  m.def("release_held_on_other_thread", &bridge_test::release_held_on_other_thread,
        py::call_guard<py::gil_scoped_release>());
  capture_test::bind_capture<py::module_, py::object>(m, py::call_guard<py::gil_scoped_release>());
  py::class_<streamlike::graph_exec>(m, "GraphExec").def("launch", &capture_test::launch);
  m.attr("binding") = "pybind11";
  // The type C++ streams become, for isinstance checks.
  PyObject* stream_type = reinterpret_cast<PyObject*>(streamlike::python::stream_type());
  if (stream_type == nullptr) throw py::error_already_set();
  m.attr("Stream") = py::reinterpret_borrow<py::object>(stream_type);
  PyObject* fake_torch = bridge_test::make_fake_torch_stream_type();
  if (fake_torch == nullptr) throw py::error_already_set();
  m.attr("FakeTorchStreamBase") = py::reinterpret_steal<py::object>(fake_torch);
  m.def("reader_of", [](py::handle obj) { return bridge_test::reader_of(obj.ptr()); });
  bridge_test::bind_routes<py::error_already_set, py::handle>(m);
}
