// event (include/streamlike/event.hpp).
#include "capture_checks.hpp"
#include "devices.hpp"
#include "error_messages.hpp"
#include "event_access.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>
#include <streamlike/event.hpp>

#include <string>

namespace streamlike {

void detail::event_access::record(event& e, cudaStream_t stream, const char* type) {
  const unsigned long long id = capture::capture_id_or_none(stream, type, "record");
  throw_if_error_of(cudaEventRecord(e.handle_, stream), type, "record: cudaEventRecord");
  e.capture_id_.store(id, std::memory_order_relaxed);
}

namespace {

// An event last recorded in a capture marks a point in that capture's graph, not work that runs:
// while the capture lasts, cudaEventQuery/Synchronize/ElapsedTime on it invalidate the capture;
// after it, CUDA refuses them (CUDA 13 with a bare cudaErrorInvalidValue) until the event is
// recorded again outside a capture. Refused
// here, with CUDA's code, in both cases: telling them apart would mean asking the recording
// stream, which may be gone by then.
[[noreturn]] void throw_captured(std::string_view operation, std::string_view call, unsigned long long capture) {
  std::string reason = "the event was last recorded in a CUDA graph capture (capture id ";
  reason += std::to_string(capture);
  reason += "): it marks a point of the graph, and the work before it runs only when the graph is launched. "
            "While the capture lasts ";
  reason += call;
  reason += " would invalidate it, and after it CUDA refuses the call. Record an event "
            "on the stream after launching the graph, or record this one again outside a capture "
            "(docs/cuda-graphs.md)";
  throw error(cudaErrorCapturedEvent, std::string("event::") + std::string(operation), reason);
}

} // namespace

event event::create(const event_options& options) {
  int device = 0;
  if (options.device) {
    device = *options.device;
  } else {
    device = detail::devices::current("event::create");
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
  detail::event_access::record(*this, stream.get(), "event");
}

bool event::is_done() const {
  require_handle("is_done");
  if (const unsigned long long capture = capture_id(); capture != 0) [[unlikely]]
    throw_captured("is_done", "cudaEventQuery", capture);
  detail::capture::refuse_if_unsafe_calls_prohibited("event", "is_done", "cudaEventQuery");
  const cudaError_t status = cudaEventQuery(handle_);
  if (status == cudaErrorNotReady) return false; // an answer, not an error (see stream_view::is_done)
  detail::throw_if_error(status, "event::is_done: cudaEventQuery");
  return true;
}

void event::sync() const {
  require_handle("sync");
  if (const unsigned long long capture = capture_id(); capture != 0) [[unlikely]]
    throw_captured("sync", "cudaEventSynchronize", capture);
  detail::capture::refuse_if_unsafe_calls_prohibited("event", "sync", "cudaEventSynchronize");
  detail::throw_if_error(cudaEventSynchronize(handle_), "event::sync: cudaEventSynchronize");
}

float elapsed_ms(const event& start, const event& stop) {
  start.require_handle("elapsed_ms (start)");
  stop.require_handle("elapsed_ms (stop)");
  if (const unsigned long long capture = start.capture_id(); capture != 0) [[unlikely]]
    throw_captured("elapsed_ms (start)", "cudaEventElapsedTime", capture);
  if (const unsigned long long capture = stop.capture_id(); capture != 0) [[unlikely]]
    throw_captured("elapsed_ms (stop)", "cudaEventElapsedTime", capture);
  // Not measured whether CUDA counts cudaEventElapsedTime among the calls a capture prohibits; it
  // asks both events' completion as cudaEventQuery does, so it is treated as one (docs/cuda-graphs.md).
  detail::capture::refuse_if_unsafe_calls_prohibited("streamlike", "elapsed_ms", "cudaEventElapsedTime");
  float ms = 0.0f;
  detail::throw_if_error(cudaEventElapsedTime(&ms, start.handle_, stop.handle_), "elapsed_ms: cudaEventElapsedTime");
  return ms;
}

namespace {

void require_event(const event& e, std::string_view operation) {
  if (!e) {
    detail::throw_empty("event", operation, "default-constructed or moved-from", "one made by event::create");
  }
}

} // namespace

void wait(stream_view consumer, const event& e) {
  require_event(e, "wait");
  // One cheap, capture-safe query on the eager path; the rest only for a capturing consumer.
  if (detail::capture::status_or_none(consumer.get()) != cudaStreamCaptureStatusNone) [[unlikely]] {
    const capture_state state = detail::capture::state_of(consumer.get(), "streamlike", "wait(stream, event)");
    if (state.status == capture_status::invalidated) {
      detail::capture::throw_capturing("streamlike", "wait(stream, event)",
                                       "its capture is already invalidated (end it), so a wait");
    }
    if (e.capture_id() != state.id) {
      std::string reason = "the stream is capturing a CUDA graph (capture id " + std::to_string(state.id) +
                           ") and the event was last recorded outside that capture (";
      reason += e.capture_id() == 0 ? std::string("outside any capture, or never")
                                    : "in capture " + std::to_string(e.capture_id());
      reason += "); a capture can wait only on events recorded in it (cudaErrorStreamCaptureIsolation would "
                "invalidate it). Wait before the capture begins, record the event in the capture, or ask for an "
                "external wait node explicitly with wait_external(stream, event) (docs/cuda-graphs.md)";
      throw error(cudaErrorStreamCaptureIsolation, "streamlike::wait(stream, event)", reason);
    }
  }
  detail::throw_if_error_of(cudaStreamWaitEvent(consumer.get(), e.get(), 0), "streamlike",
                            "wait(stream, event): cudaStreamWaitEvent");
}

void wait_external(stream_view consumer, const event& e) {
  require_event(e, "wait_external");
  // CUDA 13 answers cudaErrorIllegalState to cudaEventWaitExternal on a stream that is not
  // capturing (seen on the H200): outside a capture the external wait is the ordinary one.
  const bool capturing = detail::capture::status_or_none(consumer.get()) != cudaStreamCaptureStatusNone;
  detail::throw_if_error_of(cudaStreamWaitEvent(consumer.get(), e.get(), capturing ? cudaEventWaitExternal : 0U),
                            "streamlike", "wait_external(stream, event): cudaStreamWaitEvent");
}

} // namespace streamlike
