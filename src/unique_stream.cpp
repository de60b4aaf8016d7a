// unique_stream (include/streamlike/unique_stream.hpp).
#include "error_messages.hpp"
#include "partition_streams.hpp"
#include "stream_lifecycle.hpp"

#include <streamlike/unique_stream.hpp>

#include <utility>

namespace streamlike {

unique_stream unique_stream::create(stream_options options) {
  if (options.partition) [[unlikely]] {
    const detail::green_stream made = detail::create_green_stream(options, "unique_stream::create");
    try {
      detail::keep_partition_of(made.handle, made.facts.device, std::move(*options.partition));
    } catch (...) {
      detail::destroy_green_stream(made.handle, made.facts.device);
      throw;
    }
    return unique_stream(made.handle);
  }
  return unique_stream(detail::create_stream(options, "unique_stream::create").handle);
}

unique_stream unique_stream::adopt(cudaStream_t handle) {
  if (stream_view{handle}.is_default()) detail::throw_cannot_own_default("unique_stream::adopt");
  return unique_stream(handle);
}

void unique_stream::destroy(cudaStream_t handle) noexcept {
  // Made on a partition: the driver's destroy, as the green stream's context is not current.
  if (!detail::destroy_if_kept_partition(handle)) detail::destroy_stream(handle);
}

void unique_stream::throw_empty(const char* what) {
  detail::throw_empty("unique_stream", what, "default-constructed, moved-from or released", "one that owns a stream");
}

} // namespace streamlike
