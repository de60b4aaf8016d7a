// streamlike/detail/benchmark_floor.hpp: the raw CUDA calls a benchmark measures streamlike's
// stream creation against, made from inside the library so that a face of it (the Python package)
// can time the floor from its own module without making a CUDA call of its own.
#ifndef STREAMLIKE_DETAIL_BENCHMARK_FLOOR_HPP
#define STREAMLIKE_DETAIL_BENCHMARK_FLOOR_HPP

#include <streamlike/detail/export.hpp>

namespace streamlike::detail {

/// cudaStreamCreateWithPriority(cudaStreamNonBlocking, priority 0) and cudaStreamDestroy on the
/// current device, nothing else: what shared_stream::create() and the last drop cost at least.
/// Throws streamlike::error if either call fails.
STREAMLIKE_API void create_and_destroy_raw_stream();

} // namespace streamlike::detail

#endif // STREAMLIKE_DETAIL_BENCHMARK_FLOOR_HPP
