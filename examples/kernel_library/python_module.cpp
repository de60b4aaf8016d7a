// kernel_library_nb: the library for Python callers of any framework (nanobind). Arrays: anything
// with __cuda_array_interface__ or DLPack (torch, CuPy, numba-cuda, cuda.core, JAX); the stream:
// any object with __cuda_stream__, or left out (None, streamlike.CURRENT) for the caller's current
// stream: torch's, CuPy's, tvm-ffi's, a streamlike.use block's (docs/kernel-library.md).
#include "cuda_arrays.hpp"
#include "kernel_library.hpp"
#include "probe.hpp"

#include <streamlike/python/nanobind_current_stream.hpp>

#include <nanobind/nanobind.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace nb = nanobind;
using kernel_library::python::cuda_float_array_of;
using streamlike::python::stream_or_current;

namespace {

void require_same_size(std::int64_t a, std::int64_t b, const char* what) {
  if (a != b)
    throw std::invalid_argument(std::string(what) + ": expected arrays of one size, got " + std::to_string(a) +
                                " and " + std::to_string(b) + " elements");
}

void scale_add(float a, nb::handle x, nb::handle y, stream_or_current stream) {
  const auto xs = cuda_float_array_of(x, "x", false);
  const auto ys = cuda_float_array_of(y, "y", true);
  require_same_size(xs.size, ys.size, "scale_add");
  kernel_library::scale_add(a, xs.data, ys.data, xs.size, stream.view);
}

void sum(nb::handle x, nb::handle out, stream_or_current stream) {
  const auto xs = cuda_float_array_of(x, "x", false);
  const auto outs = cuda_float_array_of(out, "out", true);
  if (outs.size < 1) throw std::invalid_argument("out: expected at least one element, got an empty array");
  kernel_library::sum(xs.data, xs.size, outs.data, stream.view);
}

void gated_copy(const kernel_library::probe::gate& gate, nb::handle x, nb::handle t, double timeout_s,
                stream_or_current stream) {
  const auto xs = cuda_float_array_of(x, "x", false);
  const auto ts = cuda_float_array_of(t, "t", true);
  require_same_size(xs.size, ts.size, "gated_copy");
  kernel_library::probe::gated_copy(gate.address(), xs.data, ts.data, xs.size,
                                    static_cast<std::uint64_t>(timeout_s * 1e9), stream.view);
}

} // namespace

NB_MODULE(kernel_library_nb, m) {
  // The module's own current_stream() also sees streamlike.use blocks and CuPy's stream where the
  // streamlike package is loaded (docs/current-stream.md).
  m.attr("linked_to_package") = streamlike::python::link_package_current_stream();

  m.def("scale_add", &scale_add, nb::arg("a"), nb::arg("x"), nb::arg("y"), nb::arg("stream") = nb::none(),
        "y = a * x + y, in place, queued on `stream` (default: the caller's current stream).");
  m.def("sum", &sum, nb::arg("x"), nb::arg("out"), nb::arg("stream") = nb::none(),
        "out[0] = sum of x, queued on `stream` (default: the caller's current stream).");

  // The tests' probes (probe.hpp).
  nb::class_<kernel_library::probe::gate>(m, "Gate")
      .def(nb::init<>())
      .def_prop_ro("address", &kernel_library::probe::gate::address)
      .def_prop_ro("started", &kernel_library::probe::gate::started)
      .def_prop_ro("timed_out", &kernel_library::probe::gate::timed_out)
      .def("open", &kernel_library::probe::gate::open)
      .def("reset", &kernel_library::probe::gate::reset);
  m.def("gated_copy", &gated_copy, nb::arg("gate"), nb::arg("x"), nb::arg("t"), nb::arg("timeout_s") = 10.0,
        nb::arg("stream") = nb::none(), "t = x once `gate` opens, queued on `stream`.");
}
