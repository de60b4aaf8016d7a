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

namespace detail {
struct event_access;
} // namespace detail

/// How event::create (and record()) make an event.
struct event_options {
  /// The device to create the event on; empty: the current device.
  std::optional<int> device{};
  /// Timing costs a little on every record; off unless asked for (cudaEventDisableTiming).
  bool timing = false;
};

/// A move-only owning cudaEvent_t; destroyed (never throwing) with the object.
class STREAMLIKE_API event {
public:
  /// Empty: owns no event; every operation but destruction, moving and swap throws.
  constexpr event() noexcept = default;
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  event(event&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  event& operator=(event&& other) noexcept {
    event(std::move(other)).swap(*this);
    return *this;
  }
  ~event();

  /// A new event on options.device (the current device stays current). Throws streamlike::error
  /// if CUDA cannot create it.
  [[nodiscard]] static event create(const event_options& options = {});

  /// False when empty (default-constructed or moved-from).
  [[nodiscard]] explicit operator bool() const noexcept { return handle_ != nullptr; }
  /// The handle, still owned by this event; nullptr when empty.
  [[nodiscard]] cudaEvent_t get() const noexcept { return handle_; }

  // Each of these throws streamlike::error on an empty event or a failed CUDA call.

  /// Captures the work queued on `stream` so far (cudaEventRecord).
  void record(stream_view stream);
  /// True once the recorded work has completed (cudaEventQuery).
  [[nodiscard]] bool is_done() const;
  /// Blocks the calling thread until the recorded work has completed (cudaEventSynchronize).
  void sync() const;
  /// Milliseconds between two timed events (both created with timing = true, both completed).
  friend float elapsed_ms(const event& start, const event& stop);

  void swap(event& other) noexcept { std::swap(handle_, other.handle_); }

private:
  friend struct detail::event_access;
  explicit event(cudaEvent_t handle) noexcept : handle_(handle) {}
  void require_handle(const char* what) const; // throws streamlike::error on an empty event
  cudaEvent_t handle_ = nullptr;
};

[[nodiscard]] STREAMLIKE_API float elapsed_ms(const event& start, const event& stop);

/// A new event, created on the stream's device unless options.device says otherwise, with the
/// work queued on any stream-like object's stream so far recorded in it. Throws streamlike::error
/// on a failed CUDA call (and what get_stream throws, e.g. for an empty owner).
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
