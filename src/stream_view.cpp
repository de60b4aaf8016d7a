// stream_view (include/streamlike/stream_view.hpp): one CUDA call per query, so the runtime's own
// handle checks apply; the operations are src/stream_operations.cpp's, which name this type.
#include <streamlike/detail/stream_operations.hpp>
#include <streamlike/event.hpp>
#include <streamlike/stream_view.hpp>

namespace streamlike {

int stream_view::device() const { return detail::stream_operations::device(handle_, "stream_view"); }

unsigned long long stream_view::id() const { return detail::stream_operations::id(handle_, "stream_view"); }

unsigned int stream_view::flags() const { return detail::stream_operations::flags(handle_, "stream_view"); }

int stream_view::priority() const { return detail::stream_operations::priority(handle_, "stream_view"); }

bool stream_view::is_capturing() const { return detail::stream_operations::is_capturing(handle_, "stream_view"); }

capture_state stream_view::capture_info() const {
  return detail::stream_operations::capture_info(handle_, "stream_view");
}

bool stream_view::is_done() const { return detail::stream_operations::is_done(handle_, "stream_view"); }

void stream_view::sync() const { detail::stream_operations::sync(handle_, "stream_view"); }

void stream_view::wait(cudaEvent_t event) const { detail::stream_operations::wait(handle_, event, "stream_view"); }

void stream_view::wait(stream_view producer) const {
  detail::stream_operations::wait(handle_, producer.handle_, "stream_view");
}

event stream_view::record() const { return record(event_options{}); }

event stream_view::record(const event_options& options) const {
  return detail::stream_operations::record(handle_, options, "stream_view");
}

} // namespace streamlike
