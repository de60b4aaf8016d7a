// A lock for a critical section of a few instructions on a path that costs what the driver costs
// (a stream's create and destroy): taking and giving it back is one exchange and one store, where
// std::mutex is two calls into the C library, which a green stream's create + destroy measurably
// paid, taken twice (bench/RESULTS.md, "Partitions", rounds/creation_parts). A waiter spins a little, then yields its core, so a holder descheduled
// mid-section does not cost the waiters a time slice each.
#ifndef STREAMLIKE_SRC_SPIN_LOCK_HPP
#define STREAMLIKE_SRC_SPIN_LOCK_HPP

#include <atomic>
#include <thread>

namespace streamlike::detail {

/// Meets BasicLockable, so std::lock_guard takes it. Constant-initialized: usable before and after
/// every static's lifetime.
class spin_lock {
public:
  constexpr spin_lock() noexcept = default;
  spin_lock(const spin_lock&) = delete;
  spin_lock& operator=(const spin_lock&) = delete;

  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire)) [[unlikely]] wait_until_free();
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

private:
  // Reads only (no exchange) while it waits, so waiters do not take the line from the holder.
  void wait_until_free() const noexcept {
    for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
      if (spins >= spins_before_yield) std::this_thread::yield();
    }
  }
  static constexpr int spins_before_yield = 64;

  std::atomic<bool> locked_{false};
};

} // namespace streamlike::detail

#endif // STREAMLIKE_SRC_SPIN_LOCK_HPP
