// Cross-stream ordering (src/ordering.hpp: what stream_operations::wait(consumer, producer) does)
// through a per-thread cache of timing-free events.
#include "capture_checks.hpp"
#include "cuda_context.hpp"
#include "devices.hpp"
#include "driver_entry_points.hpp"
#include "error_messages.hpp"
#include "ordering.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>

#include <string>
#include <vector>

namespace streamlike::detail {
namespace {

// One event per CUDA context for this thread, found by the context's unique id (cuCtxGetId).
// Keyed by context id rather than by device: after cudaDeviceReset a device has a new primary
// context with a new id, so an event of the dead context is never used again (using it would
// touch a dangling handle), and streams of driver-API or green contexts get events of their own.
// Thread-local, so no lock on the hot path; released at thread exit (the main thread's
// thread_locals die before the runtime's own exit handlers run).
class event_cache {
public:
  event_cache() = default;
  event_cache(const event_cache&) = delete;
  event_cache& operator=(const event_cache&) = delete;

  ~event_cache() {
    for (const slot& s : slots_) {
      if (still_alive(s) && cudaEventDestroy(s.event) != cudaSuccess) (void)cudaGetLastError();
    }
  }

  /// The event to record on `producer`; created on first use in the producer's context, whose id
  /// is `known_context_id` where the caller knows it (else asked: cuStreamGetCtx + cuCtxGetId).
  cudaEvent_t get(cudaStream_t producer, unsigned long long known_context_id, const char* type) {
    const unsigned long long context_id = known_context_id != 0 ? known_context_id : cuda_context::id_of(producer);
    if (context_id == 0) [[unlikely]]
      throw_unidentified(producer, type);
    for (const slot& s : slots_) {
      if (s.context_id == context_id) return s.event;
    }
    return add(producer, context_id, type);
  }

private:
  struct slot {
    unsigned long long context_id = 0;
    int device = -1;
    unsigned long long primary_context_id = 0; // context_id for the device's primary context, else 0
    cudaEvent_t event = nullptr;
  };

  [[noreturn]] static void throw_unidentified(cudaStream_t producer, const char* type) {
    // The runtime names the same failure (an invalid handle, no driver) in its own words.
    int device = -1;
    throw_if_error_of(cudaStreamGetDevice(producer, &device), type, "wait: cudaStreamGetDevice");
    throw error(cudaErrorInvalidResourceHandle, std::string(type) + "::wait",
                "cannot identify the producer stream's context");
  }

  static bool still_alive(const slot& s) noexcept { return cuda_context::still_alive(s.primary_context_id, s.device); }

  cudaEvent_t add(cudaStream_t producer, unsigned long long context_id, const char* type) {
    // Forget events of contexts that are gone (without destroying them: they died with it).
    std::erase_if(slots_, [](const slot& s) { return !still_alive(s); });
    // Through the context, not cudaStreamGetDevice: the producer may be capturing.
    const int device = devices::of(producer, type, "wait");
    const device_guard on_device(device);
    cudaEvent_t event = nullptr;
    throw_if_error_of(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), type, "wait: cudaEventCreateWithFlags");
    slots_.push_back(slot{context_id, device, cuda_context::primary_or_zero(context_id, device), event});
    return event;
  }

  std::vector<slot> slots_;
};

event_cache& this_thread_events() {
  thread_local event_cache cache;
  return cache;
}

} // namespace

namespace {

// A capturing consumer may wait only on a producer of the same capture: the record then becomes
// a dependency inside the graph (a join). Work outside the capture cannot be waited on in it
// (CUDA: cudaErrorStreamCaptureIsolation, and the capture is invalidated); an external wait
// (cudaEventWaitExternal) would not mean "the producer's work so far" at replay time, so
// streamlike refuses rather than pick that meaning (docs/cuda-graphs.md).
void check_capturing_consumer(cudaStream_t consumer, cudaStream_t producer, const char* type) {
  const capture_state consumer_state = capture::state_of(consumer, type, "wait");
  if (consumer_state.status == capture_status::invalidated) {
    capture::throw_capturing(type, "wait", "its capture is already invalidated (end it), so a wait");
  }
  const capture_state producer_state = capture::state_of(producer, type, "wait");
  if (producer_state.status != capture_status::active || producer_state.id != consumer_state.id) {
    throw error(cudaErrorStreamCaptureIsolation, std::string(type) + "::wait",
                "the stream is capturing a CUDA graph and the producer's work is outside that capture; a "
                "capture can wait only on streams of the same capture (cudaErrorStreamCaptureIsolation would "
                "invalidate it). Order them before the capture begins, or fork the producer into the capture "
                "first by waiting it on the capturing stream (docs/cuda-graphs.md)");
  }
}

// Records `event` on the producer and makes the consumer wait for it: on the driver where its
// entry points exist (the runtime's wrappers cost more: bench/RESULTS.md, "Ordering"), and through the runtime
// where the driver has no answer, so that a failure is reported with the runtime's error (a
// failed call changed nothing, so making it again is harmless).
void record_then_wait(cudaEvent_t event, cudaStream_t producer, cudaStream_t consumer, const char* type) {
  const auto& drv = driver::get();
  if (drv.event_record == nullptr || drv.stream_wait_event == nullptr ||
      drv.event_record(event, producer) != CUDA_SUCCESS) [[unlikely]] {
    throw_if_error_of(cudaEventRecord(event, producer), type, "wait: cudaEventRecord");
    throw_if_error_of(cudaStreamWaitEvent(consumer, event, 0), type, "wait: cudaStreamWaitEvent");
    return;
  }
  if (drv.stream_wait_event(consumer, event, 0) != CUDA_SUCCESS) [[unlikely]]
    throw_if_error_of(cudaStreamWaitEvent(consumer, event, 0), type, "wait: cudaStreamWaitEvent");
}

} // namespace

void wait_through_cached_event(cudaStream_t consumer, cudaStream_t producer, unsigned long long producer_context_id,
                               const char* type) {
  // One cheap, capture-safe query on the eager path; the rest only for a capturing consumer.
  if (capture::status_or_none(consumer) != cudaStreamCaptureStatusNone) [[unlikely]]
    check_capturing_consumer(consumer, producer, type);
  const cudaEvent_t event = this_thread_events().get(producer, producer_context_id, type);
  record_then_wait(event, producer, consumer, type);
}

} // namespace streamlike::detail
