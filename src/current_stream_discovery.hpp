// The look for frameworks loaded since the last one (src/current_stream_discovery.cpp), and the
// lock-free test current_stream() makes before it: has the loader loaded anything since?
#ifndef STREAMLIKE_SRC_CURRENT_STREAM_DISCOVERY_HPP
#define STREAMLIKE_SRC_CURRENT_STREAM_DISCOVERY_HPP

#include <link.h>

#include <atomic>

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

} // namespace streamlike::detail::current

#endif // STREAMLIKE_SRC_CURRENT_STREAM_DISCOVERY_HPP
