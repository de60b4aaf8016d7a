// streamlike/event.hpp: a move-only owning CUDA event, for users who want one.
//
// Ordering between streams needs none (stream_view::wait(producer) uses a per-thread cache of
// cudaEventDisableTiming events); this is for recording a point in a stream and waiting for it
// or timing up to it.
//
// Under CUDA graph capture (docs/cuda-graphs.md, "Events"): an event remembers the capture its
// last record() was made in, so that sync(), is_done(), elapsed_ms() and wait(stream, event)
// refuse by name where CUDA would invalidate the capture, instead of invalidating it.
#ifndef STREAMLIKE_EVENT_HPP
#define STREAMLIKE_EVENT_HPP

#include <streamlike/detail/export.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_view.hpp>

#include <atomic>
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
  event(event&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)),
        capture_id_(other.capture_id_.exchange(0, std::memory_order_relaxed)) {}
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

  /// Captures the work queued on `stream` so far (cudaEventRecord). On a capturing stream the
  /// event becomes a point of that capture's graph (no work runs); the event remembers which
  /// capture (capture_id()), asked with cudaStreamGetCaptureInfo, which is capture-safe.
  void record(stream_view stream);
  /// True once the recorded work has completed (cudaEventQuery). Refused by name (see sync()).
  [[nodiscard]] bool is_done() const;
  /// Blocks the calling thread until the recorded work has completed (cudaEventSynchronize).
  /// Refused by name, before any CUDA call, for an event whose last record was made in a capture
  /// (code cudaErrorCapturedEvent: the work it marks runs only when the graph is launched), and
  /// while a capture that streamlike began (capture_scope) makes CUDA prohibit the call on this
  /// thread (code cudaErrorStreamCaptureUnsupported; docs/cuda-graphs.md says which cases only
  /// CUDA can judge).
  void sync() const;
  /// Milliseconds between two timed events (both created with timing = true, both completed).
  /// Refused by name when either event's last record was made in a capture.
  friend float elapsed_ms(const event& start, const event& stop);

  /// The id of the capture (capture_state::id) this event's last record() was made in; 0 when
  /// it was made outside any capture or the event was never recorded. Only records made through
  /// streamlike count: a cudaEventRecord on get() is not seen.
  [[nodiscard]] unsigned long long capture_id() const noexcept { return capture_id_.load(std::memory_order_relaxed); }

  void swap(event& other) noexcept {
    std::swap(handle_, other.handle_);
    // Not atomic as a whole (neither is swapping the handles): swap an event no other thread uses.
    const unsigned long long mine = capture_id_.load(std::memory_order_relaxed);
    capture_id_.store(other.capture_id_.exchange(mine, std::memory_order_relaxed), std::memory_order_relaxed);
  }

private:
  friend struct detail::event_access;
  explicit event(cudaEvent_t handle) noexcept : handle_(handle) {}
  void require_handle(const char* what) const; // throws streamlike::error on an empty event
  cudaEvent_t handle_ = nullptr;
  // The capture of the last record; 0: none. Atomic: one thread may sync() (reading it) while
  // another record()s the same event (writing it); relaxed, since the CUDA calls order the rest.
  std::atomic<unsigned long long> capture_id_{0};
};

[[nodiscard]] STREAMLIKE_API float elapsed_ms(const event& start, const event& stop);

/// Work queued on `consumer` from now on waits for the work recorded in `e` (cudaStreamWaitEvent).
/// While `consumer` captures, `e` must have been last recorded (through streamlike) in the same
/// capture, which makes the wait a join inside the graph; an event recorded outside that capture
/// (before it, in another one, or never) is refused by name, code cudaErrorStreamCaptureIsolation,
/// before CUDA would invalidate the capture. A stream outside any capture waiting on an event of
/// an active capture joins that capture (a fork), as in CUDA. Throws streamlike::error on an
/// empty event or a failed CUDA call.
STREAMLIKE_API void wait(stream_view consumer, const event& e);

/// The explicit external wait (cudaStreamWaitEvent with cudaEventWaitExternal): in a capture it
/// becomes an event-wait node of the graph, which at each launch waits for whatever `e` was last
/// recorded on at that time (not for the work recorded in it now); outside a capture it is the
/// ordinary wait. Never refused for where `e` was recorded: that is the caller's choice.
STREAMLIKE_API void wait_external(stream_view consumer, const event& e);

/// wait(consumer, e) for any stream-like consumer (an owner as an lvalue).
template <class S>
  requires stream_like<S>
void wait(S&& consumer, const event& e) { streamlike::wait(streamlike::get_stream(std::forward<S>(consumer)), e); }

/// wait_external(consumer, e) for any stream-like consumer (an owner as an lvalue).
template <class S>
  requires stream_like<S>
void wait_external(S&& consumer, const event& e) {
  streamlike::wait_external(streamlike::get_stream(std::forward<S>(consumer)), e);
}

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
