// event (include/streamlike/event.hpp).
#include "cuda_context.hpp"
#include "error_messages.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>
#include <streamlike/event.hpp>

namespace streamlike {

event event::create(const event_options& options) {
  int device = 0;
  if (options.device) {
    device = *options.device;
  } else {
    detail::throw_if_error(cudaGetDevice(&device), "event::create: cudaGetDevice");
  }
  const device_guard on_device(device);
  cudaEvent_t handle = nullptr;
  detail::throw_if_error(cudaEventCreateWithFlags(&handle, options.timing ? cudaEventDefault : cudaEventDisableTiming),
                         "event::create: cudaEventCreateWithFlags");
  return event(handle);
}

event::~event() {
  if (handle_ != nullptr && cudaEventDestroy(handle_) != cudaSuccess) (void)cudaGetLastError();
}

void event::require_handle(const char* what) const {
  if (handle_ == nullptr) {
    detail::throw_empty("event", what, "default-constructed or moved-from", "one made by event::create");
  }
}

void event::record(stream_view stream) {
  require_handle("record");
  detail::throw_if_error(cudaEventRecord(handle_, stream.get()), "event::record: cudaEventRecord");
}

bool event::is_done() const {
  require_handle("is_done");
  const cudaError_t status = cudaEventQuery(handle_);
  if (status == cudaErrorNotReady) return false; // an answer, not an error (see stream_view::is_done)
  detail::throw_if_error(status, "event::is_done: cudaEventQuery");
  return true;
}

void event::sync() const {
  require_handle("sync");
  detail::throw_if_error(cudaEventSynchronize(handle_), "event::sync: cudaEventSynchronize");
}

float elapsed_ms(const event& start, const event& stop) {
  start.require_handle("elapsed_ms (start)");
  stop.require_handle("elapsed_ms (stop)");
  float ms = 0.0f;
  detail::throw_if_error(cudaEventElapsedTime(&ms, start.handle_, stop.handle_), "elapsed_ms: cudaEventElapsedTime");
  return ms;
}

} // namespace streamlike
