// streamlike/detail/stream_operations.hpp: the operations of a stream that stream_view,
// shared_stream and unique_stream all offer, on a raw handle; defined once, in
// src/stream_operations.cpp. stream_view's members and the owners' (owner_operations.hpp) call
// them. `type` names the caller's type in errors ("shared_stream::sync: cudaStreamSynchronize"),
// so each type reports its own operation.
//
// Exported (the owners' operations are inline and call these from the user's code); not an API:
// call the members of stream_view or of an owner.
#ifndef STREAMLIKE_DETAIL_STREAM_OPERATIONS_HPP
#define STREAMLIKE_DETAIL_STREAM_OPERATIONS_HPP

#include <streamlike/capture_state.hpp>
#include <streamlike/config.hpp>
#include <streamlike/detail/export.hpp>
#include <streamlike/event.hpp>

namespace streamlike::detail::stream_operations {

// Each is safe on a capturing stream (docs/cuda-graphs.md): it answers without a call that
// would invalidate the capture, or refuses by name (a streamlike::error saying the stream is
// capturing) before making one.

/// The stream's device, through its context (src/cuda_context.cpp).
[[nodiscard]] STREAMLIKE_API int device(cudaStream_t stream, const char* type);
/// cudaStreamGetId; refused on a capturing stream.
[[nodiscard]] STREAMLIKE_API unsigned long long id(cudaStream_t stream, const char* type);
/// cudaStreamGetFlags; refused on a capturing stream.
[[nodiscard]] STREAMLIKE_API unsigned int flags(cudaStream_t stream, const char* type);
/// cudaStreamGetPriority, safe in a capture.
[[nodiscard]] STREAMLIKE_API int priority(cudaStream_t stream, const char* type);
/// cudaStreamIsCapturing != none.
[[nodiscard]] STREAMLIKE_API bool is_capturing(cudaStream_t stream, const char* type);
/// cudaStreamGetCaptureInfo.
[[nodiscard]] STREAMLIKE_API capture_state capture_info(cudaStream_t stream, const char* type);
/// cudaStreamQuery: true once all work queued so far has completed; refused on a capturing stream,
/// and while a capture prohibits it (refuse_if_unsafe_calls_prohibited).
[[nodiscard]] STREAMLIKE_API bool is_done(cudaStream_t stream, const char* type);
/// cudaStreamSynchronize; refused as is_done is.
STREAMLIKE_API void sync(cudaStream_t stream, const char* type);
/// The check that sync(), is_done() and the event calls make before CUDA (docs/cuda-graphs.md,
/// "Calls a capture prohibits"): throws streamlike::error naming "<type>::<operation>" and the
/// capture where one under way makes CUDA prohibit the potentially unsafe call `why` (e.g.
/// "cudaEventSynchronize") on this thread. For a caller that releases a lock a current-stream
/// provider needs before making the call (the Python package releases the GIL, without which
/// CuPy's provider cannot answer): it calls this first, with the lock held.
STREAMLIKE_API void refuse_if_unsafe_calls_prohibited(const char* type, const char* operation, const char* why);
/// cudaStreamWaitEvent.
STREAMLIKE_API void wait(cudaStream_t consumer, cudaEvent_t event, const char* type);
/// `consumer` waits for the work queued on `producer` so far, through this thread's cached
/// event for the producer's context (src/ordering.cpp); a no-op for the same stream. A capturing
/// consumer may wait only on a producer in the same capture (a join); anything else is refused.
STREAMLIKE_API void wait(cudaStream_t consumer, cudaStream_t producer, const char* type);
/// The same, where the caller knows the id of the CUDA context `producer` was made in (an owner's
/// cached facts: known_context_id_of): the cached event is found by it, without asking CUDA for
/// the producer's context (cuStreamGetCtx + cuCtxGetId, about a third of what wait adds to the
/// driver's record and wait: bench/RESULTS.md, "Ordering"). 0: unknown, asked as wait() does.
STREAMLIKE_API void wait_known_context(cudaStream_t consumer, cudaStream_t producer,
                                       unsigned long long producer_context_id, const char* type);

/// The id of the CUDA context `producer`'s stream was made in, where the object knows it without
/// asking CUDA (a shared_stream whose facts are cached, made in a primary context: its hidden friend
/// known_context_id); 0 otherwise.
template <class Producer>
[[nodiscard]] unsigned long long known_context_id_of(const Producer& producer) noexcept {
  if constexpr (requires {
                  { known_context_id(producer) }
                  noexcept->std::same_as<unsigned long long>;
                }) {
    return known_context_id(producer);
  } else {
    return 0;
  }
}
/// A new event with the work queued on `stream` so far recorded in it, created on options.device,
/// else on the stream's device.
[[nodiscard]] STREAMLIKE_API event record(cudaStream_t stream, const event_options& options, const char* type);

} // namespace streamlike::detail::stream_operations

#endif // STREAMLIKE_DETAIL_STREAM_OPERATIONS_HPP
