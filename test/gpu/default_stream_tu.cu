// One translation unit's view of the handle 0, compiled twice (see default_stream_tu.hpp):
// meson builds it once plainly and once with nvcc --default-stream per-thread (which defines
// CUDA_API_PER_THREAD_DEFAULT_STREAM) and STREAMLIKE_TEST_PER_THREAD_TU.
#include "default_stream_tu.hpp"

#include <streamlike/default_stream.hpp>
#include <streamlike/stream_encodings.hpp>

#include <cuda_runtime.h>

#if defined(STREAMLIKE_TEST_PER_THREAD_TU)
#  define STREAMLIKE_TEST_TU per_thread_tu
static_assert(streamlike::default_stream_is_per_thread,
              "this copy must be compiled with nvcc --default-stream per-thread (meson.build passes it)");
#else
#  define STREAMLIKE_TEST_TU legacy_tu
static_assert(!streamlike::default_stream_is_per_thread, "this copy must be compiled in legacy mode");
#endif

namespace STREAMLIKE_TEST_TU {
bool default_stream_is_per_thread() { return streamlike::default_stream_is_per_thread; }

cudaStream_t resolve_zero() { return streamlike::resolve_default(streamlike::stream_view{cudaStream_t{}}).get(); }

cudaStream_t from_address_zero() { return streamlike::from_address(0).get(); }

bool is_legacy_default_zero() { return streamlike::is_legacy_default(streamlike::stream_view{cudaStream_t{}}); }

bool is_per_thread_default_zero() { return streamlike::is_per_thread_default(streamlike::stream_view{cudaStream_t{}}); }

// In the per-thread copy the runtime header maps cudaStreamGetId to its _ptsz variant, which
// reads 0 as the per-thread default stream: this is the runtime's answer, not streamlike's.
cudaError_t runtime_id_of_zero(unsigned long long* id) { return cudaStreamGetId(cudaStream_t{}, id); }

} // namespace STREAMLIKE_TEST_TU
