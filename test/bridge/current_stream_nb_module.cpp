// The nanobind current-stream test module: current_stream_functions.hpp bound with
// streamlike/python/nanobind_current_stream.hpp. Built twice (test/bridge/meson.build): linked to
// libstreamlike.so, and as streamlike_current_static_test with a static copy of its own.
#include <streamlike/python/nanobind_current_stream.hpp>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "current_stream_functions.hpp"

namespace nb = nanobind;

#ifndef CURRENT_TEST_MODULE
#  define CURRENT_TEST_MODULE streamlike_current_nb_test
#endif

NB_MODULE(CURRENT_TEST_MODULE, m) {
  current_test::bind_common(m);
  m.def("stream_arg", &current_test::stream_arg, nb::arg("stream") = nb::none());
  m.def("memset_on", &current_test::memset_on, nb::arg("address"), nb::arg("nbytes"), nb::arg("value"),
        nb::arg("stream") = nb::none());
  m.def("current_inside_scope", &current_test::current_inside_scope, nb::arg("stream"));
  m.def("call_inside_scope", &current_test::call_inside_scope<nb::object>, nb::arg("stream"), nb::arg("inside"),
        nb::arg("device") = 0);
}
