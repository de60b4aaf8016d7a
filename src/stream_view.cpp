// stream_view (include/streamlike/stream_view.hpp): one CUDA call per query, so the runtime's own
// handle checks apply; and the operations the owning streams share with it.
#include "capture_checks.hpp"
#include "cuda_context.hpp"
#include "error_messages.hpp"
#include "stream_operations.hpp"

#include <streamlike/error.hpp>
#include <streamlike/stream_view.hpp>

namespace streamlike {

namespace detail::stream_operations {

int device(cudaStream_t stream, const char* type) { return cuda_context::device_of(stream, type, "device"); }

unsigned long long id(cudaStream_t stream, const char* type) {
  // No capture-safe way to the id exists: cudaStreamGetId (and cuStreamGetId) invalidate a capture.
  capture::refuse_if_capturing(stream, type, "id", "cudaStreamGetId");
  unsigned long long id = 0;
  throw_if_error_of(cudaStreamGetId(stream, &id), type, "id: cudaStreamGetId");
  return id;
}

unsigned int flags(cudaStream_t stream, const char* type) {
  capture::refuse_if_capturing(stream, type, "flags", "cudaStreamGetFlags");
  unsigned int flags = 0;
  throw_if_error_of(cudaStreamGetFlags(stream, &flags), type, "flags: cudaStreamGetFlags");
  return flags;
}

int priority(cudaStream_t stream, const char* type) {
  int priority = 0;
  throw_if_error_of(cudaStreamGetPriority(stream, &priority), type, "priority: cudaStreamGetPriority");
  return priority;
}

bool is_capturing(cudaStream_t stream, const char* type) {
  return capture::status_of(stream, type, "is_capturing") != cudaStreamCaptureStatusNone;
}

capture_state capture_info(cudaStream_t stream, const char* type) {
  return capture::state_of(stream, type, "capture_info");
}

bool is_done(cudaStream_t stream, const char* type) {
  capture::refuse_if_capturing(stream, type, "is_done", "cudaStreamQuery");
  const cudaError_t status = cudaStreamQuery(stream);
  // Not ready is an answer, not an error, and the runtime does not record it as one: clearing
  // the last error here would swallow someone else's.
  if (status == cudaErrorNotReady) return false;
  throw_if_error_of(status, type, "is_done: cudaStreamQuery");
  return true;
}

void sync(cudaStream_t stream, const char* type) {
  capture::refuse_if_capturing(stream, type, "sync", "cudaStreamSynchronize");
  throw_if_error_of(cudaStreamSynchronize(stream), type, "sync: cudaStreamSynchronize");
}

void wait(cudaStream_t consumer, cudaEvent_t event, const char* type) {
  throw_if_error_of(cudaStreamWaitEvent(consumer, event, 0), type, "wait: cudaStreamWaitEvent");
}

} // namespace detail::stream_operations

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

} // namespace streamlike
