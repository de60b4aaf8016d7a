#include "capture_checks.hpp"

#include "partition_streams.hpp"

#include <streamlike/error.hpp>
#include <streamlike/partition.hpp>
#include <streamlike/stream_pool.hpp>

#include <stdexcept>
#include <string>
#include <utility>

namespace streamlike {

stream_pool::stream_pool(std::size_t size, const stream_options& options) {
  if (size == 0) {
    throw std::invalid_argument("streamlike: stream_pool: size 0; expected at least one stream (the default is 16)");
  }
  streams_.reserve(size);
  for (std::size_t i = 0; i < size; ++i) streams_.push_back(shared_stream::create(options));
  device_ = streams_.front().device();
  priority_ = options.priority;
}

shared_stream stream_pool::get_for(stream_view caller) {
  const partition_info where = partition_of(caller);
  if (where.device != device_) {
    throw std::invalid_argument("streamlike: stream_pool::get_for: a stream of device " + std::to_string(where.device) +
                                "; expected one of the pool's device " + std::to_string(device_));
  }
  if (!where.green) return get();
  const std::size_t next = next_.fetch_add(1, std::memory_order_relaxed);
  const std::lock_guard lock(partitions_lock_);
  auto& streams = partition_streams_[where.context_id];
  if (streams.empty()) {
    stream_options options{.priority = priority_, .partition = detail::partition_of_green_context(where.green_context)};
    std::vector<shared_stream> made;
    made.reserve(streams_.size());
    for (std::size_t i = 0; i < streams_.size(); ++i) made.push_back(shared_stream::create(options));
    streams = std::move(made); // only once all are made: a failure leaves none and is retried
  }
  return streams[next % streams.size()];
}

shared_stream stream_pool::get_non_capturing() {
  for (std::size_t tried = 0; tried < streams_.size(); ++tried) {
    const shared_stream& candidate = streams_[next_.fetch_add(1, std::memory_order_relaxed) % streams_.size()];
    if (detail::capture::status_of(candidate.get(), "stream_pool", "get_non_capturing") ==
        cudaStreamCaptureStatusNone) {
      return candidate;
    }
  }
  throw error(cudaErrorStreamCaptureUnsupported, "stream_pool::get_non_capturing",
              "every one of the pool's " + std::to_string(streams_.size()) +
                  " streams is in a CUDA graph capture; expected at least one that is not (end a capture, or "
                  "use a larger pool)");
}

} // namespace streamlike
