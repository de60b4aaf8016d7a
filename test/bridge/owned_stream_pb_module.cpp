// The pybind11 module of the owning-exchange tests: owned_stream_functions.hpp bound with
// streamlike/python/pybind11.hpp.
#include <streamlike/python/pybind11.hpp>

#include "owned_stream_functions.hpp"

namespace py = pybind11;

PYBIND11_MODULE(streamlike_owned_pb_test, m) {
  using namespace owned_test;
  m.def("make_fake_stream", &make_fake_stream);
  m.def("made", &made);
  m.def("released", &released);
  m.def("set_report_releases", &set_report_releases);
  m.def("make_capsule", [](std::uintptr_t address, unsigned major, const std::string& name) {
    PyObject* capsule = make_capsule(address, major, name);
    if (capsule == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(capsule);
  });
  m.def("hold", &hold);
  m.def("held_handle", &held_handle);
  m.def("held_use_count", &held_use_count);
  m.def("release_held", &release_held);
  m.def("drop_held_on_thread_keeping_gil", &drop_held_on_thread_keeping_gil);
  m.def("hold_until_exit", &hold_until_exit);
  m.def("take_shared", &take_shared);
  m.def("take_borrowed", [](py::handle obj) {
    if (!take_borrowed(obj.ptr())) throw py::error_already_set();
  });
  m.def("make_stream", &make_stream);
  m.def("held_memset", &held_memset);
  m.def("held_sum_bytes", &held_sum_bytes);
  m.attr("binding") = "pybind11";
  PyObject* stream_type = reinterpret_cast<PyObject*>(streamlike::python::stream_type());
  if (stream_type == nullptr) throw py::error_already_set();
  m.attr("Stream") = py::reinterpret_borrow<py::object>(stream_type);
}
