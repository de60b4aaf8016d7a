// The operations of a stream that stream_view, shared_stream and unique_stream all offer, on a
// raw handle. `type` names the caller's type in errors ("shared_stream::sync:
// cudaStreamSynchronize"), so each type reports its own operation.
#ifndef STREAMLIKE_SRC_STREAM_OPERATIONS_HPP
#define STREAMLIKE_SRC_STREAM_OPERATIONS_HPP

#include <streamlike/capture_state.hpp>
#include <streamlike/event.hpp>

#include <cuda_runtime_api.h>

namespace streamlike::detail::stream_operations {

// Each is safe on a capturing stream (docs/cuda-graphs.md): it answers without a call that
// would invalidate the capture, or refuses by name (a streamlike::error saying the stream is
// capturing) before making one.

/// The stream's device, through its context (src/cuda_context.cpp).
[[nodiscard]] int device(cudaStream_t stream, const char* type);
/// cudaStreamGetId; refused on a capturing stream (src/stream_view.cpp).
[[nodiscard]] unsigned long long id(cudaStream_t stream, const char* type);
/// cudaStreamGetFlags; refused on a capturing stream (src/stream_view.cpp).
[[nodiscard]] unsigned int flags(cudaStream_t stream, const char* type);
/// cudaStreamGetPriority, safe in a capture (src/stream_view.cpp).
[[nodiscard]] int priority(cudaStream_t stream, const char* type);
/// cudaStreamIsCapturing != none (src/stream_view.cpp).
[[nodiscard]] bool is_capturing(cudaStream_t stream, const char* type);
/// cudaStreamGetCaptureInfo (src/stream_view.cpp).
[[nodiscard]] capture_state capture_info(cudaStream_t stream, const char* type);
/// cudaStreamQuery: true once all work queued so far has completed; refused on a capturing
/// stream (src/stream_view.cpp).
[[nodiscard]] bool is_done(cudaStream_t stream, const char* type);
/// cudaStreamSynchronize; refused on a capturing stream (src/stream_view.cpp).
void sync(cudaStream_t stream, const char* type);
/// cudaStreamWaitEvent (src/stream_view.cpp).
void wait(cudaStream_t consumer, cudaEvent_t event, const char* type);
/// `consumer` waits for the work queued on `producer` so far, through this thread's cached
/// event for the producer's context; a no-op for the same stream (src/ordering.cpp). A capturing
/// consumer may wait only on a producer in the same capture (a join); anything else is refused.
void wait(cudaStream_t consumer, cudaStream_t producer, const char* type);
/// A new event with the work queued on `stream` so far recorded in it, created on options.device,
/// else on the stream's device (src/event.cpp).
[[nodiscard]] event record(cudaStream_t stream, const event_options& options, const char* type);

} // namespace streamlike::detail::stream_operations

#endif // STREAMLIKE_SRC_STREAM_OPERATIONS_HPP
