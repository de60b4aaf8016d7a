// How one stream waits for the work queued on another (src/ordering.cpp): the per-thread cache of
// timing-free events and the capture rules of a cross-stream wait. Called by
// detail::stream_operations::wait(consumer, producer), which is what the types' wait members call.
#ifndef STREAMLIKE_SRC_ORDERING_HPP
#define STREAMLIKE_SRC_ORDERING_HPP

#include <cuda_runtime_api.h>

namespace streamlike::detail {

/// `consumer` waits for the work queued on `producer` so far: this thread's cached event for the
/// producer's CUDA context is recorded on the producer and waited on by the consumer. A capturing
/// consumer may wait only on a producer in the same capture (a join); anything else is refused by
/// name. `producer != consumer` (the caller handles the same stream). `producer_context_id`: the
/// id of the producer's CUDA context where the caller knows it, else 0 (then asked of CUDA).
void wait_through_cached_event(cudaStream_t consumer, cudaStream_t producer, unsigned long long producer_context_id,
                               const char* type);

} // namespace streamlike::detail

#endif // STREAMLIKE_SRC_ORDERING_HPP
