#include "capture_checks.hpp"

#include <streamlike/error.hpp>
#include <streamlike/stream_pool.hpp>

#include <stdexcept>
#include <string>

namespace streamlike {

stream_pool::stream_pool(std::size_t size, const stream_options& options) {
  if (size == 0) {
    throw std::invalid_argument("streamlike: stream_pool: size 0; expected at least one stream (the default is 16)");
  }
  streams_.reserve(size);
  for (std::size_t i = 0; i < size; ++i) streams_.push_back(shared_stream::create(options));
  device_ = streams_.front().device();
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
