// Cross-stream ordering through a per-thread cache of timing-free events, and the event type.
#include "driver_entry_points.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>
#include <streamlike/event.hpp>
#include <streamlike/stream_view.hpp>

#include <string>
#include <vector>

namespace streamlike {
namespace detail {
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
      if (still_alive(s) && cudaEventDestroy(s.event) != cudaSuccess) cudaGetLastError();
    }
  }

  /// The event to record on `producer`; created on first use in the producer's context.
  cudaEvent_t get(cudaStream_t producer) {
    const unsigned long long context_id = context_of(producer);
    for (const slot& s : slots_) {
      if (s.context_id == context_id) return s.event;
    }
    return add(producer, context_id);
  }

private:
  struct slot {
    unsigned long long context_id = 0;
    int device = -1;
    bool primary = false; // the device's primary context, which cudaDeviceReset destroys
    cudaEvent_t event = nullptr;
  };

  static unsigned long long context_of(cudaStream_t stream) {
    const auto& drv = driver::get();
    CUcontext ctx = nullptr;
    unsigned long long id = 0;
    if (drv.stream_get_ctx == nullptr || drv.ctx_get_id == nullptr || drv.stream_get_ctx(stream, &ctx) != CUDA_SUCCESS ||
        drv.ctx_get_id(ctx, &id) != CUDA_SUCCESS) {
      // The runtime names the same failure (an invalid handle, no driver) in its own words.
      int device = -1;
      throw_if_error(cudaStreamGetDevice(stream, &device), "stream_view::wait: cudaStreamGetDevice");
      throw error(cudaErrorInvalidResourceHandle, "stream_view::wait", "cannot identify the producer stream's context");
    }
    return id;
  }

  // A primary-context event whose device was reset died with it: its handle must not be touched.
  // Other contexts belong to whoever made them, who must keep them alive while they are used.
  static bool still_alive(const slot& s) noexcept {
    return !s.primary || driver::primary_context_id(s.device) == s.context_id;
  }

  cudaEvent_t add(cudaStream_t producer, unsigned long long context_id) {
    // Forget events of contexts that are gone (without destroying them: they died with it).
    std::erase_if(slots_, [](const slot& s) { return !still_alive(s); });
    int device = -1;
    throw_if_error(cudaStreamGetDevice(producer, &device), "stream_view::wait: cudaStreamGetDevice");
    const device_guard on_device(device);
    cudaEvent_t event = nullptr;
    throw_if_error(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "stream_view::wait: cudaEventCreateWithFlags");
    slots_.push_back(slot{context_id, device, driver::primary_context_id(device) == context_id, event});
    return event;
  }

  std::vector<slot> slots_;
};

event_cache& this_thread_events() {
  thread_local event_cache cache;
  return cache;
}

} // namespace
} // namespace detail

void stream_view::wait(stream_view producer) const {
  if (producer.handle_ == handle_) return;
  const cudaEvent_t event = detail::this_thread_events().get(producer.handle_);
  detail::throw_if_error(cudaEventRecord(event, producer.handle_), "stream_view::wait: cudaEventRecord");
  detail::throw_if_error(cudaStreamWaitEvent(handle_, event, 0), "stream_view::wait: cudaStreamWaitEvent");
}

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
  if (handle_ != nullptr && cudaEventDestroy(handle_) != cudaSuccess) cudaGetLastError();
}

void event::require_handle(const char* what) const {
  if (handle_ == nullptr) {
    throw error(cudaErrorInvalidResourceHandle, std::string("event::") + what,
                "the event is empty (default-constructed or moved-from); expected one made by event::create");
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
