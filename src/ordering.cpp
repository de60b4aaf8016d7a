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

// One event per device for this thread. Thread-local, so no lock on the hot path; destroyed at
// thread exit (the main thread's thread_locals die before the runtime's own exit handlers run).
class event_cache {
public:
  event_cache() = default;
  event_cache(const event_cache&) = delete;
  event_cache& operator=(const event_cache&) = delete;

  ~event_cache() {
    for (std::size_t device = 0; device < slots_.size(); ++device) {
      const slot& s = slots_[device];
      // After cudaDeviceReset the event died with its context: do not touch the stale handle.
      if (s.event != nullptr && driver::primary_context_id(static_cast<int>(device)) == s.context_id) {
        if (cudaEventDestroy(s.event) != cudaSuccess) cudaGetLastError();
      }
    }
  }

  cudaEvent_t get(int device) {
    if (device >= static_cast<int>(slots_.size())) slots_.resize(static_cast<std::size_t>(device) + 1);
    slot& s = slots_[static_cast<std::size_t>(device)];
    if (s.event == nullptr) {
      const device_guard on_device(device);
      throw_if_error(cudaEventCreateWithFlags(&s.event, cudaEventDisableTiming), "stream_view::wait: cudaEventCreateWithFlags");
      s.context_id = driver::primary_context_id(device);
    }
    return s.event;
  }

  // The event's context is gone (the device was reset): forget the handle, make a new one next time.
  void forget(int device) noexcept { slots_[static_cast<std::size_t>(device)] = slot{}; }

private:
  struct slot {
    cudaEvent_t event = nullptr;
    unsigned long long context_id = 0;
  };
  std::vector<slot> slots_;
};

event_cache& this_thread_events() {
  thread_local event_cache cache;
  return cache;
}

bool context_lost(cudaError_t status) noexcept {
  return status == cudaErrorInvalidResourceHandle || status == cudaErrorContextIsDestroyed;
}

} // namespace
} // namespace detail

void stream_view::wait(stream_view producer) const {
  if (producer.handle_ == handle_) return;
  int device = -1;
  detail::throw_if_error(cudaStreamGetDevice(producer.handle_, &device), "stream_view::wait: cudaStreamGetDevice");
  auto& cache = detail::this_thread_events();
  cudaError_t status = cudaEventRecord(cache.get(device), producer.handle_);
  if (detail::context_lost(status)) { // a stale cached event after cudaDeviceReset: retry once with a new one
    cudaGetLastError();
    cache.forget(device);
    status = cudaEventRecord(cache.get(device), producer.handle_);
  }
  detail::throw_if_error(status, "stream_view::wait: cudaEventRecord");
  detail::throw_if_error(cudaStreamWaitEvent(handle_, cache.get(device), 0), "stream_view::wait: cudaStreamWaitEvent");
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
