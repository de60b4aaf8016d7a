// stream_view's queries: one CUDA call each, so the runtime's own handle checks apply.
#include <streamlike/error.hpp>
#include <streamlike/stream_view.hpp>

namespace streamlike {

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

bool stream_view::is_done() const {
  const cudaError_t status = cudaStreamQuery(handle_);
  // Not ready is an answer, not an error, and the runtime does not record it as one: clearing
  // the last error here would swallow someone else's.
  if (status == cudaErrorNotReady) return false;
  detail::throw_if_error(status, "stream_view::is_done: cudaStreamQuery");
  return true;
}

void stream_view::sync() const {
  detail::throw_if_error(cudaStreamSynchronize(handle_), "stream_view::sync: cudaStreamSynchronize");
}

void stream_view::wait(cudaEvent_t event) const {
  detail::throw_if_error(cudaStreamWaitEvent(handle_, event, 0), "stream_view::wait: cudaStreamWaitEvent");
}

} // namespace streamlike
