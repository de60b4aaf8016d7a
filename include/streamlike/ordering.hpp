// streamlike/ordering.hpp: make one stream wait for the work already queued on another.
#ifndef STREAMLIKE_ORDERING_HPP
#define STREAMLIKE_ORDERING_HPP

#include <streamlike/detail/stream_operations.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_view.hpp>

#include <utility>

namespace streamlike {

/// Work queued on `consumer` from now on waits for the work already queued on `producer`, also
/// when they live on different devices; a no-op when both are the same stream. No event is
/// created per call: each thread keeps one cudaEventDisableTiming event per CUDA context, recorded
/// on the producer and waited on by the consumer (a wait captures the event's state when it is
/// queued, so the event can be reused at once). Throws streamlike::error on CUDA failures.
template <class Consumer, class Producer>
  requires stream_like<Consumer> && stream_like<Producer>
void wait(Consumer&& consumer, Producer&& producer) {
  // An owner that knows its stream's context (a shared_stream) spares the lookup of the cached event.
  const unsigned long long context = detail::stream_operations::known_context_id_of(producer);
  const stream_view consumer_view = streamlike::get_stream(std::forward<Consumer>(consumer));
  detail::stream_operations::wait_known_context(
      consumer_view.get(), streamlike::get_stream(std::forward<Producer>(producer)).get(), context, "stream_view");
}

} // namespace streamlike

#endif // STREAMLIKE_ORDERING_HPP
