// The nanobind module of the owning-exchange tests: owned_stream_functions.hpp bound with
// streamlike/python/nanobind.hpp.
#include <streamlike/python/nanobind.hpp>

#include <nanobind/stl/string.h>

#include "owned_stream_functions.hpp"

namespace nb = nanobind;

NB_MODULE(streamlike_owned_nb_test, m) {
  using namespace owned_test;
  m.def("make_fake_stream", &make_fake_stream);
  m.def("made", &made);
  m.def("released", &released);
  m.def("set_report_releases", &set_report_releases);
  m.def("make_capsule", [](std::uintptr_t address, unsigned major, const std::string& name) {
    PyObject* capsule = make_capsule(address, major, name);
    if (capsule == nullptr) throw nb::python_error();
    return nb::steal(capsule);
  });
  m.def("hold", &hold);
  m.def("held_handle", &held_handle);
  m.def("held_use_count", &held_use_count);
  m.def("release_held", &release_held);
  m.def("drop_held_on_thread_keeping_gil", &drop_held_on_thread_keeping_gil);
  m.def("hold_until_exit", &hold_until_exit);
  m.def("take_shared", &take_shared);
  m.def("take_borrowed", [](nb::handle obj) {
    if (!take_borrowed(obj.ptr())) throw nb::python_error();
  });
  m.def("make_stream", &make_stream);
  m.def("held_memset", &held_memset);
  m.def("held_sum_bytes", &held_sum_bytes);
  m.attr("binding") = "nanobind";
  PyObject* stream_type = reinterpret_cast<PyObject*>(streamlike::python::stream_type());
  if (stream_type == nullptr) throw nb::python_error();
  m.attr("Stream") = nb::borrow(stream_type);
}
