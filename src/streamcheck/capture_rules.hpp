// streamcheck: the captures under way in the process and CUDA's rules for them (docs/streamcheck.md,
// "Capture breakers"): which calls a capture punishes, by the capture's mode and the calling
// thread's interaction mode, and which streams and events belong to a capture (the streams forked
// into it by waiting on an event recorded in it). Pure: no CUDA call, no CUPTI type.
#ifndef STREAMLIKE_SRC_STREAMCHECK_CAPTURE_RULES_HPP
#define STREAMLIKE_SRC_STREAMCHECK_CAPTURE_RULES_HPP

#include "call_event.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace streamlike::check {

class capture_tracker {
public:
  /// Follows a capture_begin, capture_end or capture_mode call (seen after it returned).
  void note(const call_event& e);
  /// Why `e`, about to run, would break a capture under way; empty when it would not. Also follows
  /// what `e` does to the captures, as CUDA will once it runs: an event recorded on a stream of a
  /// capture belongs to that capture, a stream outside any capture that waits on such an event is
  /// forked into it, and a destroyed stream or event leaves it.
  [[nodiscard]] std::string breaker(const call_event& e);
  /// Whether any capture is under way (lock-free: the common answer is no).
  [[nodiscard]] bool any() const noexcept { return count_.load(std::memory_order_acquire) != 0; }
  /// A thread that exited: its interaction mode is forgotten (a new thread with its id starts global).
  void forget_thread(std::uint64_t thread);

private:
  // A stream as CUDA tells them apart: the per-thread default stream (0x2) is one per thread.
  struct stream_key {
    std::uintptr_t stream;
    std::uint64_t thread; // the per-thread default stream's thread; 0 for every other stream
    friend bool operator==(const stream_key&, const stream_key&) = default;
  };
  struct capture {
    std::uint64_t id; // the tracker's own, never reused
    stream_key origin;
    cudaStreamCaptureMode mode;
    std::uint64_t thread;
    bool blocking;
    int device; // -1: unknown
  };
  struct member {
    stream_key stream;
    std::uint64_t capture; // capture::id
  };

  // What `e` breaks (lock held, nothing changed), and what it changes (lock held).
  [[nodiscard]] std::string judge(const call_event& e) const;
  void follow(const call_event& e);

  [[nodiscard]] cudaStreamCaptureMode mode_of(std::uint64_t thread) const;
  [[nodiscard]] const capture* with_id(std::uint64_t id) const;
  [[nodiscard]] const capture* capture_of(const stream_key& stream) const; // its origin or a member
  [[nodiscard]] const capture* blocking_capture_on(int device) const;
  [[nodiscard]] std::string unsafe_call_breaker(const call_event& e) const;

  mutable std::mutex mutex_;
  std::vector<capture> captures_;                                         // active, process-wide
  std::vector<member> members_;                                           // streams forked into them
  std::unordered_map<std::uintptr_t, std::uint64_t> events_;              // event -> capture::id
  std::uint64_t next_id_ = 1;                                             // the next capture::id
  std::atomic<std::size_t> count_{0};                                     // captures_.size(), read unlocked
  std::unordered_map<std::uint64_t, cudaStreamCaptureMode> thread_modes_; // only threads that exchanged
};

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_CAPTURE_RULES_HPP
