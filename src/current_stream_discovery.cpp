// Framework discovery for the current stream: which built-in frameworks (torch, tvm-ffi) the
// dynamic loader has loaded, found without a lock on current_stream()'s path; the registry
// (src/current_stream_registry.cpp) publishes what a look found, and is the list's one writer. Each framework's provider is in a
// file of its own (src/current_stream_torch.cpp, src/current_stream_tvm_ffi.cpp).
#include "current_stream_discovery.hpp"
#include "current_stream_registry.hpp"

#include <dlfcn.h>
#include <link.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace streamlike::detail::current {

constinit std::atomic<const link_map*> watched_last{nullptr};

namespace {

/// How many times the dynamic loader has loaded an object (glibc's dlpi_adds): a change means a
/// framework may have arrived. Reading it costs one dl_iterate_phdr stopped at the first object.
unsigned long long load_count() noexcept {
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t size, void* out) -> int {
        if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
          *static_cast<unsigned long long*>(out) = info->dlpi_adds;
        return 1; // the first object is enough: the counter is global
      },
      &adds);
  return adds;
}

/// The loader's counter and its list's last object, read together under the loader's lock.
struct loader_state {
  unsigned long long adds = 0;
  const link_map* last = nullptr;
  std::string last_name; // a copy: the object may be unloaded once the lock is released
};

loader_state read_loader() noexcept {
  loader_state state;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t size, void* out) -> int {
        auto& st = *static_cast<loader_state*>(out);
        if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds)) st.adds = info->dlpi_adds;
        const link_map* last = _r_debug.r_map; // the default namespace's list, stable under the lock
        while (last != nullptr && last->l_next != nullptr) last = last->l_next;
        if (last != nullptr && last->l_name != nullptr) {
          try {
            st.last_name = last->l_name;
            st.last = last;
          } catch (...) {
            st.last = nullptr; // out of memory: no watch, the throttled look serves
          }
        }
        return 1;
      },
      &state);
  return state;
}

/// Watches `last` (named `last_name`) from now on, when it can be pinned and is still the object read.
void watch_loader(const link_map* last, const std::string& last_name) noexcept {
  if (last == nullptr || last_name.empty()) return; // the program itself: not pinnable by name
  void* pinned = dlopen(last_name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (pinned == nullptr) return;
  link_map* object = nullptr;
  if (dlinfo(pinned, RTLD_DI_LINKMAP, &object) != 0 || object != last) {
    (void)dlclose(pinned); // another object by now: the next look watches
    return;
  }
  watched_last.store(object, std::memory_order_release); // pinned for good
}

/// The coarse monotonic clock (a few ms per tick, read without a system call), in ticks.
long long coarse_tick() noexcept {
  timespec now{};
  if (clock_gettime(CLOCK_MONOTONIC_COARSE, &now) != 0) return -2; // never equal to a real tick
  return static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec;
}

} // namespace

framework_look::~framework_look() {
  if (!recorded_) {
    // Not published (out of memory): found again on a later look.
    if (torch_new_) r_.torch_found = false;
    if (tvm_ffi_new_) r_.tvm_ffi_found = false;
  }
  r_.looking.store(false, std::memory_order_release);
}

void framework_look::published() noexcept {
  r_.seen_loads.store(loader_adds_, std::memory_order_relaxed);
  watch_loader(loader_last_, loader_last_name_);
  recorded_ = true;
}

bool look_for_frameworks(registry& r, bool throttled, std::optional<framework_look>& look) noexcept {
  if (r.all_found.load(std::memory_order_relaxed)) return false;
  if (throttled) {
    // At most once per tick of the coarse clock (a few milliseconds): reading the loader's counter takes the
    // loader's lock, which every thread asking for the current stream would otherwise contend for.
    const long long tick = coarse_tick();
    if (tick == r.last_tick.load(std::memory_order_relaxed)) return false;
    r.last_tick.store(tick, std::memory_order_relaxed);
  }
  const unsigned long long loads = load_count();
  if (loads == r.seen_loads.load(std::memory_order_relaxed)) return false;
  // One looker at a time, and nobody waits for it: a reader that finds a look in progress goes on
  // with the list published (a framework being found now is seen on a later call).
  if (r.looking.exchange(true, std::memory_order_acquire)) return false;
  look.emplace(r); // ends the look (the flag) when dropped
  try {
    // The counter and the last object together: a load after this is seen by either.
    const loader_state loader = read_loader();
    look->loader_adds_ = loader.adds;
    look->loader_last_ = loader.last;
    look->loader_last_name_ = loader.last_name;
    // The frameworks are looked up with no lock of ours held: dlopen(RTLD_NOLOAD) and dlsym take the
    // loader's lock, and a library's static initializer, run under that lock, may ask for the
    // current stream (and so for our lock) while we wait for it.
    const auto find = [&](bool (*in_loader)(streamlike_current_stream_provider&, direct_get&), bool& found,
                          bool& found_now) {
      provider p{};
      if (found || !in_loader(p.table, p.direct)) return;
      p.name = p.table.name;
      look->found.push_back(std::move(p));
      found = found_now = true;
    };
    find(&providers::find_torch, r.torch_found, look->torch_new_);
    find(&providers::find_tvm_ffi, r.tvm_ffi_found, look->tvm_ffi_new_);
    look->complete = r.torch_found && r.tvm_ffi_found;
  } catch (...) {
    look.reset();
    return false; // out of memory: the next look tries again
  }
  return true;
}

} // namespace streamlike::detail::current
