// streamlike/python/integer_streams.hpp: parameter types for a stream given to a bound function
// as an integer in a named convention (DLPack, __cuda_array_interface__). A plain int is never a
// stream parameter: which stream 0, 1 or 2 names depends on the convention it was written in.
// The casters (streamlike/python/nanobind.hpp, pybind11.hpp) decode them; this header needs no
// Python.
#ifndef STREAMLIKE_PYTHON_INTEGER_STREAMS_HPP
#define STREAMLIKE_PYTHON_INTEGER_STREAMS_HPP

#include <streamlike/stream_view.hpp>

#include <optional>

namespace streamlike::python {

/// A stream given as a DLPack `__dlpack__(stream=...)` integer (CUDA devices). As a parameter of
/// a bound function it accepts None or an int and decodes it with streamlike::from_dlpack_stream:
/// None and 1 are the legacy default stream, 2 the per-thread default stream, -1 asks for no
/// synchronization (`view` is empty), 0 and other negative values raise ValueError (0 is
/// ambiguous), larger values are stream handles. A bool, a float or a stream object raise TypeError.
struct dlpack_stream {
  /// The stream to synchronize with; empty for -1 (no synchronization).
  std::optional<stream_view> view;
};

/// A stream given as the "stream" field of `__cuda_array_interface__` (version 3). As a parameter
/// it accepts None or an int and decodes it with streamlike::from_cuda_array_interface_stream:
/// None means no synchronization (`view` is empty), 1 the legacy default stream, 2 the per-thread
/// default stream, other positive values are stream handles; 0 and negative values raise
/// ValueError. A bool, a float or a stream object raise TypeError.
struct cai_stream {
  /// The stream to synchronize with; empty for None (no synchronization).
  std::optional<stream_view> view;
};

} // namespace streamlike::python

#endif // STREAMLIKE_PYTHON_INTEGER_STREAMS_HPP
