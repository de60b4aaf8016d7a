// The second translation unit of the from_address fuzz target, compiled WITH
// CUDA_API_PER_THREAD_DEFAULT_STREAM (nvcc --default-stream per-thread): here from_address(0)
// must be cudaStreamPerThread. The macro comes before any include, as it changes
// cuda_runtime_api.h. Linking both TUs into one program is also the ODR check of the per-mode
// inline namespaces, under the fuzzer's sanitizers.
#define CUDA_API_PER_THREAD_DEFAULT_STREAM
#include <streamlike/stream_encodings.hpp>

#include <cstdint>

static_assert(streamlike::default_stream_is_per_thread, "this TU must be in the per-thread mode");

streamlike::stream_view per_thread_tu_from_address(std::int64_t address) { return streamlike::from_address(address); }
streamlike::stream_view per_thread_tu_from_address(std::uint64_t address) { return streamlike::from_address(address); }
