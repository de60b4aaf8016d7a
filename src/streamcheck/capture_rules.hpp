// streamcheck: the captures under way in the process and CUDA's rules for them (docs/streamcheck.md,
// "Capture breakers"): which calls a capture punishes, by the capture's mode and the calling
// thread's interaction mode. Pure: no CUDA call, no CUPTI type.
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
  /// Why `e`, about to run, would break a capture under way; empty when it would not.
  [[nodiscard]] std::string breaker(const call_event& e) const;
  /// Whether any capture is under way (lock-free: the common answer is no).
  [[nodiscard]] bool any() const noexcept { return count_.load(std::memory_order_acquire) != 0; }
  /// A thread that exited: its interaction mode is forgotten (a new thread with its id starts global).
  void forget_thread(std::uint64_t thread);

private:
  struct capture {
    std::uintptr_t stream;
    cudaStreamCaptureMode mode;
    std::uint64_t thread;
    bool blocking;
  };
  [[nodiscard]] cudaStreamCaptureMode mode_of(std::uint64_t thread) const; // lock held

  mutable std::mutex mutex_;
  std::vector<capture> captures_;                                         // active, process-wide
  std::atomic<std::size_t> count_{0};                                     // captures_.size(), read unlocked
  std::unordered_map<std::uint64_t, cudaStreamCaptureMode> thread_modes_; // only threads that exchanged
};

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_CAPTURE_RULES_HPP
