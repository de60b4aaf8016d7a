// Framework discovery for the current stream: which built-in frameworks (torch, tvm-ffi) the
// dynamic loader has loaded, found without a lock on current_stream()'s path and published into
// the registry (src/current_stream_registry.hpp) once found. Each framework's provider is in a
// file of its own (src/current_stream_torch.cpp, src/current_stream_tvm_ffi.cpp).
#include "current_stream_discovery.hpp"
#include "current_stream_registry.hpp"

#include <dlfcn.h>
#include <link.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
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

/// Watches `state.last` from now on, when it can be pinned and is still the object read.
void watch_loader(const loader_state& state) noexcept {
  if (state.last == nullptr || state.last_name.empty()) return; // the program itself: not pinnable by name
  void* pinned = dlopen(state.last_name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (pinned == nullptr) return;
  link_map* object = nullptr;
  if (dlinfo(pinned, RTLD_DI_LINKMAP, &object) != 0 || object != state.last) {
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

void look_for_frameworks(registry& r, bool throttled) noexcept {
  if (r.all_found.load(std::memory_order_relaxed)) return;
  if (throttled) {
    // At most once per tick of the coarse clock (a few milliseconds): reading the loader's counter takes the
    // loader's lock, which every thread asking for the current stream would otherwise contend for.
    const long long tick = coarse_tick();
    if (tick == r.last_tick.load(std::memory_order_relaxed)) return;
    r.last_tick.store(tick, std::memory_order_relaxed);
  }
  const unsigned long long loads = load_count();
  if (loads == r.seen_loads.load(std::memory_order_relaxed)) return;
  // One looker at a time, and nobody waits for it: a reader that finds a look in progress goes on
  // with the list published (a framework being found now is seen on a later call).
  if (r.looking.exchange(true, std::memory_order_acquire)) return;
  struct end_of_look {
    registry& r;
    ~end_of_look() { r.looking.store(false, std::memory_order_release); }
  } const ending{r};
  // The counter and the last object together: a load after this is seen by either.
  const loader_state loader = read_loader();
  // The frameworks are looked up with no lock of ours held: dlopen(RTLD_NOLOAD) and dlsym take the
  // loader's lock, and a library's static initializer, run under that lock, may ask for the
  // current stream (and so for our lock) while we wait for it.
  struct found_provider {
    streamlike_current_stream_provider table{};
    direct_get direct{};
  };
  found_provider torch;
  found_provider tvm_ffi;
  const bool torch_new = !r.torch_found && providers::find_torch(torch.table, torch.direct);
  const bool tvm_ffi_new = !r.tvm_ffi_found && providers::find_tvm_ffi(tvm_ffi.table, tvm_ffi.direct);
  r.torch_found = r.torch_found || torch_new;
  r.tvm_ffi_found = r.tvm_ffi_found || tvm_ffi_new;
  try {
    const std::lock_guard<std::mutex> lock(r.write); // held only to publish: no loader call inside
    std::vector<provider> entries = copy_of(r);
    bool added = false;
    const auto add = [&](bool is_new, const found_provider& f) {
      if (!is_new) return;
      const std::string name = f.table.name;
      // A provider registered under the same name by hand (e.g. a test's) keeps its place.
      if (std::any_of(entries.begin(), entries.end(), [&](const provider& p) { return p.name == name; })) return;
      entries.push_back(provider{f.table, name, f.direct});
      added = true;
    };
    add(torch_new, torch);
    add(tvm_ffi_new, tvm_ffi);
    const bool complete = r.torch_found && r.tvm_ffi_found;
    if (complete) r.all_found.store(true, std::memory_order_relaxed);
    // A complete list is published even when nothing was added (a framework found under a name
    // registered by hand), so that readers stop looking.
    if (added || complete) publish(r, std::move(entries));
    r.seen_loads.store(loader.adds, std::memory_order_relaxed);
    watch_loader(loader);
  } catch (...) {
    // Out of memory: the frameworks found are published on a later look.
    if (torch_new) r.torch_found = false;
    if (tvm_ffi_new) r.tvm_ffi_found = false;
  }
}

} // namespace streamlike::detail::current
