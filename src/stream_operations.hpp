// The operations of a stream that stream_view, shared_stream and unique_stream all offer, on a
// raw handle. `type` names the caller's type in errors ("shared_stream::sync:
// cudaStreamSynchronize"), so each type reports its own operation.
#ifndef STREAMLIKE_SRC_STREAM_OPERATIONS_HPP
#define STREAMLIKE_SRC_STREAM_OPERATIONS_HPP

#include <streamlike/event.hpp>

#include <cuda_runtime_api.h>

namespace streamlike::detail::stream_operations {

/// cudaStreamQuery: true once all work queued so far has completed (src/stream_view.cpp).
[[nodiscard]] bool is_done(cudaStream_t stream, const char* type);
/// cudaStreamSynchronize (src/stream_view.cpp).
void sync(cudaStream_t stream, const char* type);
/// cudaStreamWaitEvent (src/stream_view.cpp).
void wait(cudaStream_t consumer, cudaEvent_t event, const char* type);
/// `consumer` waits for the work queued on `producer` so far, through this thread's cached
/// event for the producer's context; a no-op for the same stream (src/ordering.cpp).
void wait(cudaStream_t consumer, cudaStream_t producer, const char* type);
/// A new event with the work queued on `stream` so far recorded in it, created on options.device,
/// else on the stream's device (src/event.cpp).
[[nodiscard]] event record(cudaStream_t stream, const event_options& options, const char* type);

} // namespace streamlike::detail::stream_operations

#endif // STREAMLIKE_SRC_STREAM_OPERATIONS_HPP
