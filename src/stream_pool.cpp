#include <streamlike/stream_pool.hpp>

#include <stdexcept>

namespace streamlike {

stream_pool::stream_pool(std::size_t size, const stream_options& options) {
  if (size == 0) {
    throw std::invalid_argument("streamlike: stream_pool: size 0; expected at least one stream (the default is 16)");
  }
  streams_.reserve(size);
  for (std::size_t i = 0; i < size; ++i) streams_.push_back(shared_stream::create(options));
  device_ = streams_.front().device();
}

} // namespace streamlike
