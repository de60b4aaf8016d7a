// detail::stream_operations (include/streamlike/detail/stream_operations.hpp): the operations of a
// stream that stream_view and the owners offer, each once; every type's member calls these with its
// own name for errors.
#include "capture_checks.hpp"
#include "devices.hpp"
#include "error_messages.hpp"
#include "event_access.hpp"
#include "ordering.hpp"

#include <streamlike/detail/stream_operations.hpp>
#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>
#include <streamlike/event.hpp>

namespace streamlike::detail {

namespace stream_operations {

int device(cudaStream_t stream, const char* type) { return devices::of(stream, type, "device"); }

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
  // A stream outside any capture: still prohibited while a capture that forbids unsafe calls runs.
  capture::refuse_if_unsafe_calls_prohibited(type, "is_done", "cudaStreamQuery");
  const cudaError_t status = cudaStreamQuery(stream);
  // Not ready is an answer, not an error, and the runtime does not record it as one: clearing
  // the last error here would swallow someone else's.
  if (status == cudaErrorNotReady) return false;
  throw_if_error_of(status, type, "is_done: cudaStreamQuery");
  return true;
}

void sync(cudaStream_t stream, const char* type) {
  capture::refuse_if_capturing(stream, type, "sync", "cudaStreamSynchronize");
  capture::refuse_if_unsafe_calls_prohibited(type, "sync", "cudaStreamSynchronize");
  throw_if_error_of(cudaStreamSynchronize(stream), type, "sync: cudaStreamSynchronize");
}

void refuse_if_unsafe_calls_prohibited(const char* type, const char* operation, const char* why) {
  capture::refuse_if_unsafe_calls_prohibited(type, operation, why);
}

void wait(cudaStream_t consumer, cudaEvent_t event, const char* type) {
  throw_if_error_of(cudaStreamWaitEvent(consumer, event, 0), type, "wait: cudaStreamWaitEvent");
}

void wait(cudaStream_t consumer, cudaStream_t producer, const char* type) {
  if (producer == consumer) return;
  wait_through_cached_event(consumer, producer, 0, type);
}

void wait_known_context(cudaStream_t consumer, cudaStream_t producer, unsigned long long producer_context_id,
                        const char* type) {
  if (producer == consumer) return;
  wait_through_cached_event(consumer, producer, producer_context_id, type);
}

event record(cudaStream_t stream, const event_options& options, const char* type) {
  int device = -1;
  if (options.device) {
    device = *options.device;
  } else {
    device = devices::of(stream, type, "record"); // capture-safe, unlike cudaStreamGetDevice
  }
  const device_guard on_device(device);
  cudaEvent_t handle = nullptr;
  throw_if_error_of(cudaEventCreateWithFlags(&handle, options.timing ? cudaEventDefault : cudaEventDisableTiming), type,
                    "record: cudaEventCreateWithFlags");
  event recorded = event_access::make(handle);  // owned from here: destroyed if the record fails
  event_access::record(recorded, stream, type); // remembers the capture, as event::record
  return recorded;
}

} // namespace stream_operations
} // namespace streamlike::detail
