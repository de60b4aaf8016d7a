// The look for frameworks loaded since the last one (src/current_stream_discovery.cpp), and the
// lock-free test current_stream() makes before it: has the loader loaded anything since?
#ifndef STREAMLIKE_SRC_CURRENT_STREAM_DISCOVERY_HPP
#define STREAMLIKE_SRC_CURRENT_STREAM_DISCOVERY_HPP

#include "current_stream_registry.hpp"

#include <link.h>

#include <atomic>
#include <optional>
#include <string>
#include <vector>

namespace streamlike::detail::current {

// Watching the loader without its lock.
// glibc appends every object it loads to the end of its list of loaded objects (struct link_map,
// <link.h>, reachable from _r_debug). Holding the list's last object as a look saw it, "something
// was loaded since" is that object's l_next turning non-null: one load and no lock, where the
// loader's counter (load_count) takes the loader's lock. That is what lets current_stream() skip
// the look on its fast path whatever set of frameworks is loaded (none, some, all). The watched
// object is pinned (dlopen RTLD_NOLOAD, one reference never returned), so it is never unloaded
// under the watch. glibc writes l_next under its lock and the watch reads it without: a read that
// misses a write only delays the notice to a later call, and the look itself reads under the lock.

/// The last object of the loader's list at the last look, pinned; nullptr: not watching (look).
/// Hidden, so reading it takes no indirection.
[[gnu::visibility("hidden")]] extern constinit std::atomic<const link_map*> watched_last;

/// True while nothing was loaded since the last look (as far as a lock-free read can tell).
inline bool loader_quiet() noexcept {
  const link_map* last = watched_last.load(std::memory_order_acquire);
  return last != nullptr && __atomic_load_n(&last->l_next, __ATOMIC_ACQUIRE) == nullptr;
}

/// One look for the built-in frameworks loaded since the last: what it found, for the registry to
/// publish (src/current_stream_registry.cpp). At most one exists at a time (the registry's
/// `looking` flag, cleared when it is dropped). published() records what the look saw of the
/// loader, so that the next look is due only after another load; a look dropped unpublished
/// forgets what it found, which a later look finds again.
class framework_look {
public:
  explicit framework_look(registry& r) noexcept : r_(r) {}
  framework_look(const framework_look&) = delete;
  framework_look& operator=(const framework_look&) = delete;
  ~framework_look();

  void published() noexcept;

  std::vector<provider> found; // the frameworks first found by this look, not yet published
  bool complete = false;       // with them, every built-in framework is found

private:
  friend bool look_for_frameworks(registry& r, bool throttled, std::optional<framework_look>& look) noexcept;
  registry& r_;
  bool torch_new_ = false;
  bool tvm_ffi_new_ = false;
  bool recorded_ = false;
  unsigned long long loader_adds_ = 0;
  const link_map* loader_last_ = nullptr;
  std::string loader_last_name_;
};

/// A look for built-in frameworks loaded since the last one, into `look`, where one is due; false
/// (and `look` empty) when every one is found, when the loader loaded nothing since (throttled: or
/// in this tick of the coarse clock), or when another thread is looking. Calls the loader with no
/// lock of streamlike's held.
[[nodiscard]] bool look_for_frameworks(registry& r, bool throttled, std::optional<framework_look>& look) noexcept;

} // namespace streamlike::detail::current

#endif // STREAMLIKE_SRC_CURRENT_STREAM_DISCOVERY_HPP
