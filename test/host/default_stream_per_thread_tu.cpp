// One of the two translation units of the default_stream test: compiled WITH
// CUDA_API_PER_THREAD_DEFAULT_STREAM (as nvcc --default-stream per-thread would), so here the
// handle 0 means the calling thread's per-thread default stream. The macro must come before any
// include, as it changes what cuda_runtime_api.h declares.
// default_stream_legacy_tu.cpp is its twin in the other mode; default_stream.cpp asks both.
#define CUDA_API_PER_THREAD_DEFAULT_STREAM
#include <streamlike/default_stream.hpp>
#include <streamlike/stream_encodings.hpp>

#include <cstdint>

static_assert(streamlike::default_stream_is_per_thread, "this TU must be in the per-thread mode");

// What this TU's inline functions answer, exported through plain (non-inline) functions.
bool per_thread_tu_is_per_thread() { return streamlike::default_stream_is_per_thread; }
streamlike::stream_view per_thread_tu_default_stream() { return streamlike::default_stream(); }
streamlike::stream_view per_thread_tu_resolve_default(streamlike::stream_view view) {
  return streamlike::resolve_default(view);
}
bool per_thread_tu_is_legacy_default(streamlike::stream_view view) { return streamlike::is_legacy_default(view); }
bool per_thread_tu_is_per_thread_default(streamlike::stream_view view) {
  return streamlike::is_per_thread_default(view);
}
streamlike::stream_view per_thread_tu_from_address(std::uint64_t address) { return streamlike::from_address(address); }
streamlike::stream_view per_thread_tu_from_cuda_stream_protocol(std::int64_t address) {
  return streamlike::from_cuda_stream_protocol(0, address);
}

// The addresses of this TU's inline entities. Had both modes one entity (an inline function whose
// body differs by macro), the linker would keep one copy and both TUs would return the same address.
using resolve_default_fn = streamlike::stream_view (*)(streamlike::stream_view) noexcept;
using from_address_fn = streamlike::stream_view (*)(std::uint64_t);
resolve_default_fn per_thread_tu_resolve_default_address() { return &streamlike::resolve_default; }
from_address_fn per_thread_tu_from_address_address() { return &streamlike::from_address<std::uint64_t>; }
const bool* per_thread_tu_is_per_thread_address() { return &streamlike::default_stream_is_per_thread; }
