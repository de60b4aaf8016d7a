// unique_stream (include/streamlike/unique_stream.hpp).
#include "error_messages.hpp"
#include "stream_lifecycle.hpp"
#include "stream_operations.hpp"

#include <streamlike/unique_stream.hpp>

namespace streamlike {

unique_stream unique_stream::create(const stream_options& options) {
  return unique_stream(detail::create_stream(options, "unique_stream::create").handle);
}

unique_stream unique_stream::adopt(cudaStream_t handle) {
  if (detail::names_default_stream(handle)) detail::throw_cannot_own_default("unique_stream::adopt");
  return unique_stream(handle);
}

void unique_stream::destroy(cudaStream_t handle) noexcept { detail::destroy_stream(handle); }

void unique_stream::throw_empty(const char* what) {
  detail::throw_empty("unique_stream", what, "default-constructed, moved-from or released", "one that owns a stream");
}

bool unique_stream::is_capturing() const {
  if (handle_ == nullptr) throw_empty("is_capturing");
  return detail::stream_operations::is_capturing(handle_, "unique_stream");
}

capture_state unique_stream::capture_info() const {
  if (handle_ == nullptr) throw_empty("capture_info");
  return detail::stream_operations::capture_info(handle_, "unique_stream");
}

bool unique_stream::is_done() const {
  if (handle_ == nullptr) throw_empty("is_done");
  return detail::stream_operations::is_done(handle_, "unique_stream");
}

void unique_stream::sync() const {
  if (handle_ == nullptr) throw_empty("sync");
  detail::stream_operations::sync(handle_, "unique_stream");
}

void unique_stream::wait(cudaEvent_t event) const {
  if (handle_ == nullptr) throw_empty("wait");
  detail::stream_operations::wait(handle_, event, "unique_stream");
}

void unique_stream::wait_for(stream_view producer) const {
  detail::stream_operations::wait(handle_, producer.get(), "unique_stream");
}

event unique_stream::record(const event_options& options) const {
  if (handle_ == nullptr) throw_empty("record");
  return detail::stream_operations::record(handle_, options, "unique_stream");
}

} // namespace streamlike
