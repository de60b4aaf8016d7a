// streamlike/event.hpp: a move-only owning CUDA event, for users who want one.
//
// Ordering between streams needs none (stream_view::wait(producer) uses a per-thread cache of
// cudaEventDisableTiming events); this is for recording a point in a stream and waiting for it
// or timing up to it.
#ifndef STREAMLIKE_EVENT_HPP
#define STREAMLIKE_EVENT_HPP

#include <streamlike/detail/export.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_view.hpp>

#include <optional>
#include <utility>

namespace streamlike {

struct event_options {
  /// The device to create the event on; empty: the current device.
  std::optional<int> device{};
  /// Timing costs a little on every record; off unless asked for (cudaEventDisableTiming).
  bool timing = false;
};

class STREAMLIKE_API event {
public:
  constexpr event() noexcept = default;
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  event(event&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  event& operator=(event&& other) noexcept {
    event(std::move(other)).swap(*this);
    return *this;
  }
  ~event();

  [[nodiscard]] static event create(const event_options& options = {});

  [[nodiscard]] explicit operator bool() const noexcept { return handle_ != nullptr; }
  [[nodiscard]] cudaEvent_t get() const noexcept { return handle_; }

  // Each of these throws streamlike::error on an empty event or a failed CUDA call.

  /// Captures the work queued on `stream` so far.
  void record(stream_view stream);
  /// True once the recorded work has completed.
  [[nodiscard]] bool is_done() const;
  void sync() const;
  /// Milliseconds between two timed events (both created with timing = true, both completed).
  friend float elapsed_ms(const event& start, const event& stop);

  void swap(event& other) noexcept { std::swap(handle_, other.handle_); }

private:
  explicit event(cudaEvent_t handle) noexcept : handle_(handle) {}
  void require_handle(const char* what) const; // throws streamlike::error on an empty event
  cudaEvent_t handle_ = nullptr;
};

[[nodiscard]] STREAMLIKE_API float elapsed_ms(const event& start, const event& stop);

/// Records an event on any stream-like object's stream.
template <class S>
  requires stream_like<S>
[[nodiscard]] event record(S&& stream, const event_options& options = {}) {
  const stream_view view = streamlike::get_stream(std::forward<S>(stream));
  event_options on_stream_device = options;
  if (!on_stream_device.device) on_stream_device.device = view.device();
  event e = event::create(on_stream_device);
  e.record(view);
  return e;
}

} // namespace streamlike

#endif // STREAMLIKE_EVENT_HPP
