// stream_view (include/streamlike/stream_view.hpp): one CUDA call per query, so the runtime's own
// handle checks apply; and the operations the owning streams share with it.
#include "error_messages.hpp"
#include "stream_operations.hpp"

#include <streamlike/error.hpp>
#include <streamlike/stream_view.hpp>

namespace streamlike {

namespace detail::stream_operations {

bool is_done(cudaStream_t stream, const char* type) {
  const cudaError_t status = cudaStreamQuery(stream);
  // Not ready is an answer, not an error, and the runtime does not record it as one: clearing
  // the last error here would swallow someone else's.
  if (status == cudaErrorNotReady) return false;
  throw_if_error_of(status, type, "is_done: cudaStreamQuery");
  return true;
}

void sync(cudaStream_t stream, const char* type) {
  throw_if_error_of(cudaStreamSynchronize(stream), type, "sync: cudaStreamSynchronize");
}

void wait(cudaStream_t consumer, cudaEvent_t event, const char* type) {
  throw_if_error_of(cudaStreamWaitEvent(consumer, event, 0), type, "wait: cudaStreamWaitEvent");
}

} // namespace detail::stream_operations

int stream_view::device() const {
  int device = -1;
  detail::throw_if_error(cudaStreamGetDevice(handle_, &device), "stream_view::device: cudaStreamGetDevice");
  return device;
}

unsigned long long stream_view::id() const {
  unsigned long long id = 0;
  detail::throw_if_error(cudaStreamGetId(handle_, &id), "stream_view::id: cudaStreamGetId");
  return id;
}

unsigned int stream_view::flags() const {
  unsigned int flags = 0;
  detail::throw_if_error(cudaStreamGetFlags(handle_, &flags), "stream_view::flags: cudaStreamGetFlags");
  return flags;
}

int stream_view::priority() const {
  int priority = 0;
  detail::throw_if_error(cudaStreamGetPriority(handle_, &priority), "stream_view::priority: cudaStreamGetPriority");
  return priority;
}

bool stream_view::is_done() const { return detail::stream_operations::is_done(handle_, "stream_view"); }

void stream_view::sync() const { detail::stream_operations::sync(handle_, "stream_view"); }

void stream_view::wait(cudaEvent_t event) const { detail::stream_operations::wait(handle_, event, "stream_view"); }

void stream_view::wait(stream_view producer) const {
  detail::stream_operations::wait(handle_, producer.handle_, "stream_view");
}

} // namespace streamlike
