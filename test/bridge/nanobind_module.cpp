// The nanobind test module: bridge_functions.hpp bound with streamlike/python/nanobind.hpp.
#include <streamlike/python/nanobind.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bridge_functions.hpp"
#include "capture_functions.hpp"
#include "route_functions.hpp"

namespace nb = nanobind;

NB_MODULE(streamlike_nb_test, m) {
  bridge_test::bind_all(m);
  m.def("release_held_on_other_thread", &bridge_test::release_held_on_other_thread,
        nb::call_guard<nb::gil_scoped_release>());
  capture_test::bind_capture<nb::module_, nb::object>(m, nb::call_guard<nb::gil_scoped_release>());
  nb::class_<streamlike::graph_exec>(m, "GraphExec").def("launch", &capture_test::launch);
  m.attr("binding") = "nanobind";
  // The type C++ streams become, for isinstance checks.
  PyObject* stream_type = reinterpret_cast<PyObject*>(streamlike::python::stream_type());
  if (stream_type == nullptr) throw nb::python_error();
  m.attr("Stream") = nb::borrow(stream_type);
  PyObject* fake_torch = bridge_test::make_fake_torch_stream_type();
  if (fake_torch == nullptr) throw nb::python_error();
  m.attr("FakeTorchStreamBase") = nb::steal(fake_torch);
  m.def("reader_of", [](nb::handle obj) { return bridge_test::reader_of(obj.ptr()); });
  bridge_test::bind_routes<nb::python_error, nb::handle>(m);
}
