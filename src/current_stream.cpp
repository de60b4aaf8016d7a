// current_stream(), scoped_current_stream and the provider registry (docs/current-stream.md).
#include "current_stream_registry.hpp"
#include "driver_entry_points.hpp"
#include "stream_lifecycle.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_check.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/error.hpp>

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <link.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <limits>
#include <cstdint>
#include <memory>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace streamlike {

namespace detail::current {
namespace {

// --- streamlike's own provider: a thread-local stream per device ------------------------------

// The first devices' streams in a plain array: trivial to construct and destroy, so reading it is
// one thread-local access with no initialization check. Devices beyond it, in a vector (its
// thread-local destructor is registered only on a thread that sets one).
constexpr std::size_t own_inline_devices = 32;
thread_local void* own_inline[own_inline_devices] = {};
thread_local std::vector<void*> own_more; // devices own_inline_devices and up; grows on set

[[gnu::noinline]] void* own_more_get(std::size_t device) noexcept {
  const std::size_t i = device - own_inline_devices;
  return i < own_more.size() ? own_more[i] : nullptr;
}

inline void* own_read(int32_t device) noexcept {
  const auto d = static_cast<std::size_t>(device);
  return d < own_inline_devices ? own_inline[d] : own_more_get(d);
}

// A slot no scope set answers nothing: streamlike itself names no stream there, and a "default
// stream" answer would show as a disagreement beside a framework's own block
// (current_stream_conflicts, the check).
int own_get(void*, int32_t device, void** stream) {
  void* const set = own_read(device);
  if (set == nullptr) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
  *stream = set;
  return STREAMLIKE_CURRENT_STREAM_OK;
}

int own_set(void*, int32_t device, void* stream) {
  const auto d = static_cast<std::size_t>(device);
  if (d < own_inline_devices) {
    own_inline[d] = stream;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
  try {
    const std::size_t i = d - own_inline_devices;
    if (i >= own_more.size()) {
      if (stream == nullptr) return STREAMLIKE_CURRENT_STREAM_OK; // unset already reads as 0
      own_more.resize(i + 1, nullptr);
    }
    own_more[i] = stream;
    return STREAMLIKE_CURRENT_STREAM_OK;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_FAILED; // out of memory
  }
}

// A scope enters and leaves streamlike's own slot by token (the slot's previous content), since its
// get answers nothing for an unset slot.
int own_enter(void*, int32_t device, void* stream, void** token) {
  *token = own_read(device);
  return own_set(nullptr, device, stream);
}

int own_leave(void*, int32_t device, void* token) { return own_set(nullptr, device, token); }

constexpr const char* own_name = "streamlike";

// --- The registry -----------------------------------------------------------------------------

// The list current_stream() reads: one acquire load, no function-local static's guard.
constinit std::atomic<const provider_list*> published{nullptr};

struct registry {
  std::mutex write;
  std::atomic<const provider_list*>& list = published;
  // Built-in frameworks: found once, then never looked for again. Read and written by the one
  // thread looking (`looking`).
  bool torch_found = false;
  bool tvm_ffi_found = false;
  // A look in progress: at most one thread looks; the others go on with the list as it is.
  std::atomic<bool> looking{false};
  std::atomic<bool> all_found{false};
  std::atomic<unsigned long long> seen_loads{~0ULL}; // dlpi_adds at the last look
  std::atomic<long long> last_tick{-1};              // the coarse clock's tick at the last look
};

registry& the_registry() noexcept {
  static registry* r = new registry; // never destroyed: providers may be asked during exit
  return *r;
}

/// Publishes `entries` (sorted here) as the new list; the old one stays valid forever. Called
/// under r.write.
void publish(registry& r, std::vector<provider> entries) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const provider& a, const provider& b) { return a.table.priority < b.table.priority; });
  auto* list = new provider_list{std::move(entries), {}, r.all_found.load(std::memory_order_relaxed), nullptr};
  list->getters.reserve(list->entries.size());
  for (provider& p : list->entries) {
    p.table.name = p.name.c_str(); // after the move: stable now
    list->getters.push_back(getter{p.direct.kind, p.table.get, p.table.context, p.direct.torch, p.direct.tvm_ffi});
  }
  list->replaced = r.list.load(std::memory_order_relaxed);
  r.list.store(list, std::memory_order_release);
}

std::vector<provider> copy_of(const registry& r) {
  const provider_list* list = r.list.load(std::memory_order_acquire);
  return list != nullptr ? list->entries : std::vector<provider>{};
}

/// The first list: streamlike's own provider alone.
const provider_list* initial_list(registry& r) {
  const std::lock_guard<std::mutex> lock(r.write);
  if (const provider_list* list = r.list.load(std::memory_order_acquire)) return list;
  streamlike_current_stream_provider own{};
  own.version = STREAMLIKE_CURRENT_STREAM_PROVIDER_VERSION;
  own.struct_size = sizeof own;
  own.priority = STREAMLIKE_CURRENT_STREAM_PRIORITY_STREAMLIKE;
  own.get = &own_get;
  own.set = &own_set;
  own.enter = &own_enter;
  own.leave = &own_leave;
  std::vector<provider> entries;
  entries.push_back(provider{own, own_name, direct_get{direct_kind::own, nullptr, nullptr}});
  publish(r, std::move(entries));
  return r.list.load(std::memory_order_acquire);
}

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

// --- Watching the loader without its lock -------------------------------------------------------
// glibc appends every object it loads to the end of its list of loaded objects (struct link_map,
// <link.h>, reachable from _r_debug). Holding the list's last object as a look saw it, "something
// was loaded since" is that object's l_next turning non-null: one load and no lock, where the
// loader's counter (load_count) takes the loader's lock. That is what lets current_stream() skip
// the look on its fast path whatever set of frameworks is loaded (none, some, all). The watched
// object is pinned (dlopen RTLD_NOLOAD, one reference never returned), so it is never unloaded
// under the watch. glibc writes l_next under its lock and the watch reads it without: a read that
// misses a write only delays the notice to a later call, and the look itself reads under the lock.

/// The last object of the loader's list at the last look, pinned; nullptr: not watching (look).
constinit std::atomic<const link_map*> watched_last{nullptr};

/// True while nothing was loaded since the last look (as far as a lock-free read can tell).
inline bool loader_quiet() noexcept {
  const link_map* last = watched_last.load(std::memory_order_acquire);
  return last != nullptr && __atomic_load_n(&last->l_next, __ATOMIC_ACQUIRE) == nullptr;
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

void look_for_frameworks(registry& r, bool throttled) noexcept {
  if (r.all_found.load(std::memory_order_relaxed)) return;
  if (throttled) {
    // At most once per tick of the coarse clock (1 to 4 ms): reading the loader's counter takes the
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

[[gnu::noinline]] const provider_list& providers_looking(bool throttled) noexcept {
  registry& r = the_registry();
  const provider_list* list = r.list.load(std::memory_order_acquire);
  if (list == nullptr) [[unlikely]] {
    try {
      list = initial_list(r);
    } catch (...) {
      static const provider_list empty{};
      return empty;
    }
  }
  if (!r.all_found.load(std::memory_order_relaxed)) {
    look_for_frameworks(r, throttled);
    list = r.list.load(std::memory_order_acquire);
  }
  return *list;
}

} // namespace

namespace {

/// providers(), inlined into current_stream(): once every built-in framework is found (the list
/// says so), or while the loader loaded nothing since the last look (whatever was found then),
/// the list is all there is to read.
inline const provider_list& listed(bool throttled) noexcept {
  const provider_list* list = published.load(std::memory_order_acquire);
  if (list != nullptr && (list->complete || loader_quiet())) [[likely]]
    return *list;
  return providers_looking(throttled);
}

} // namespace

const provider_list& providers(bool throttled) noexcept { return listed(throttled); }

namespace {

/// One provider's answer; false where it gave none (failed, or unavailable on this thread).
inline bool ask(const getter& g, int device, void*& stream) noexcept {
  switch (g.kind) {
    case direct_kind::own: stream = own_read(device); return stream != nullptr; // unset: no answer
    case direct_kind::torch: return g.torch(device, &stream) == 0;
    case direct_kind::tvm_ffi: stream = g.tvm_ffi(2 /* kDLCUDA */, device); return true;
    case direct_kind::table: break;
  }
  return g.get(g.context, device, &stream) == STREAMLIKE_CURRENT_STREAM_OK;
}

/// One provider a scope set: its previous stream (get + set), or the token its enter gave.
struct saved_stream {
  const provider* by;
  void* previous_or_token;
  bool token;
};

/// What a scope expects a provider to answer while nothing inside it changed that provider:
/// the scope's stream where the scope set it, the provider's answer when the scope began where it
/// could not (read-only), nothing where the provider gave no answer then (unavailable on the
/// thread, failed) or is streamlike's own slot.
struct expectation {
  void* stream = nullptr;
  bool known = false;
};

/// What scoped_current_stream saved: the list it set, what each provider had before, and what it
/// set, for the rule inside it. Linked into the entering thread's chain of open scopes.
struct saved_streams {
  const provider_list* list;
  std::vector<saved_stream> previous; // in the order set
  std::vector<expectation> expected;  // one per entry of `list`
  void* stream = nullptr;             // the scope's stream
  int device = -1;
  std::ptrdiff_t own = -1;        // streamlike's own provider in `list`
  saved_streams* outer = nullptr; // the scope opened before it on this thread
};

/// The calling thread's open scopes, innermost first.
thread_local saved_streams* innermost_scope = nullptr;

/// The innermost open scope of the calling thread on `device`, or nullptr.
inline const saved_streams* scope_on(int device) noexcept {
  for (const saved_streams* s = innermost_scope; s != nullptr; s = s->outer)
    if (s->device == device) return s;
  return nullptr;
}

/// The rule inside a scope: in the scope's list's order, the first provider whose answer is not
/// what the scope left it (a framework's own block opened inside the scope) answers, whatever it
/// names, default streams included; when none changed, the scope's stream (streamlike's own).
/// The list asked is the scope's (lists are never freed); `by` indexes it.
[[gnu::noinline]] void* scoped_answer(const saved_streams& scope, int device, std::ptrdiff_t& by) noexcept {
  const getter* const getters = scope.list->getters.data();
  const std::size_t n = scope.list->getters.size();
  for (std::size_t i = 0; i < n; ++i) {
    const expectation& e = scope.expected[i];
    if (!e.known) continue;
    void* now = nullptr;
    if (!ask(getters[i], device, now)) continue;
    if (!same_current_stream(stream_view{static_cast<cudaStream_t>(now)},
                             stream_view{static_cast<cudaStream_t>(e.stream)})) {
      by = static_cast<std::ptrdiff_t>(i);
      return now;
    }
  }
  by = scope.own;
  return scope.stream;
}

/// The rule (docs/current-stream.md): the first answer naming a stream other than a default
/// stream, else the first answer; its index in the list, or -1 for none.
inline void* first_answer(const provider_list& list, int device, std::ptrdiff_t& by) noexcept {
  const getter* const begin = list.getters.data();
  const getter* const end = begin + list.getters.size();
  void* first = nullptr;
  by = -1;
  for (const getter* g = begin; g != end; ++g) {
    void* stream = nullptr;
    if (!ask(*g, device, stream)) continue;
    if (!stream_view{static_cast<cudaStream_t>(stream)}.is_default()) {
      by = g - begin;
      return stream;
    }
    if (by < 0) {
      first = stream;
      by = g - begin;
    }
  }
  return first;
}

/// first_answer without the provider: what current_stream() needs (inlined, the unused index is
/// not kept).
inline void* current_handle(const provider_list& list, int device) noexcept {
  std::ptrdiff_t unused = -1;
  if (innermost_scope != nullptr) [[unlikely]] {
    if (const saved_streams* scope = scope_on(device)) return scoped_answer(*scope, device, unused);
  }
  return first_answer(list, device, unused);
}

} // namespace

answer current_answer(const provider_list& list, int device) noexcept {
  std::ptrdiff_t by = -1;
  if (const saved_streams* scope = scope_on(device)) {
    void* const stream = scoped_answer(*scope, device, by);
    return by < 0 ? answer{stream, nullptr} : answer{stream, &scope->list->entries[static_cast<std::size_t>(by)]};
  }
  void* const stream = first_answer(list, device, by);
  return by < 0 ? answer{} : answer{stream, &list.entries[static_cast<std::size_t>(by)]};
}

std::atomic<int> devices_known{0};

static bool cuda_absent(const error& e) noexcept {
  return e.code() == cudaErrorInsufficientDriver || e.code() == cudaErrorNoDevice;
}

void check_device_slow(int device, const char* operation) {
  try {
    check_named_device(device, operation); // the range, or the error reading the count
  } catch (const error& e) {
    // No driver or no device: nothing can be launched anywhere, and the current streams are
    // bookkeeping that works without CUDA (the frameworks keep theirs too): taken as given.
    if (cuda_absent(e)) {
      (void)cudaGetLastError();
      // For good: a process without a driver or a device does not gain one. Every device passes
      // from now on, without asking CUDA (and failing) on each call.
      devices_known.store(std::numeric_limits<int>::max(), std::memory_order_relaxed);
      return;
    }
    throw;
  }
  devices_known.store(device_count(operation), std::memory_order_relaxed);
}

int device_of_or(stream_view stream, int otherwise) {
  try {
    return stream.device(); // capture-safe (the stream's context)
  } catch (const error& e) {
    if (!cuda_absent(e)) throw;
    (void)cudaGetLastError();
    return otherwise; // no CUDA to ask: taken as given, as the device is
  }
}

void throw_bad_device(int device, const char* operation) {
  throw std::invalid_argument(std::string("streamlike::") + operation + ": device must be a device ordinal (>= 0) or " +
                              "streamlike::current_device (-1), got " + std::to_string(device));
}

namespace {

[[gnu::noinline]] int runtime_current_device(const char* operation) {
  int current = 0;
  const cudaError_t status = cudaGetDevice(&current);
  if (status != cudaSuccess) [[unlikely]]
    detail::throw_if_error(status, std::string(operation) + ": cudaGetDevice");
  return current;
}

} // namespace

int current_device_of_thread(const char* operation) {
  // The driver's device of the current context is what cudaGetDevice answers whenever a context
  // is current (and one is wherever CUDA work was done on the thread), without the runtime's
  // wrapper around it. No current context (a fresh thread), or no driver: the runtime's answer.
  const auto get_device = driver::get().ctx_get_device;
  CUdevice device = 0;
  if (get_device != nullptr && get_device(&device, nullptr) == CUDA_SUCCESS) [[likely]]
    return static_cast<int>(device);
  return runtime_current_device(operation);
}

namespace {

/// Restores `saved` in reverse order, through the very providers it set (the list it read is never
/// freed, and a provider's functions outlive its registration): one unregistered meanwhile is still
/// left, one registered again under the same name meanwhile is not handed the other's token.
/// Never throws.
void restore(const saved_streams& saved, int device) noexcept {
  for (auto it = saved.previous.rbegin(); it != saved.previous.rend(); ++it) {
    const provider& p = *it->by;
    if (it->token) {
      (void)p.table.leave(p.table.context, device, it->previous_or_token);
    } else {
      (void)p.table.set(p.table.context, device, it->previous_or_token);
    }
  }
}

} // namespace

} // namespace detail::current

namespace current = detail::current;

stream_view current_stream(int device) {
  device = current::resolve_device(device, "current_stream");
  return stream_view{static_cast<cudaStream_t>(current::current_handle(current::listed(/*throttled=*/true), device))};
}

scoped_current_stream::scoped_current_stream(stream_view stream, int device, bool device_of_stream) : stream_(stream) {
  if (device_of_stream && !stream.is_default()) {
    device_ = stream.device(); // capture-safe (the stream's context)
  } else {
    device_ = current::resolve_device(device, "scoped_current_stream");
    // A stream current on a device it does not belong to would be launched on there by every
    // framework: refused (the default streams belong to every device).
    if (!stream.is_default()) {
      if (const int own = current::device_of_or(stream, device_); own != device_) {
        throw std::invalid_argument("streamlike::scoped_current_stream: the stream belongs to device " +
                                    std::to_string(own) + ", not device " + std::to_string(device_) +
                                    "; expected a stream of device " + std::to_string(device_) +
                                    " (or leave the device out: the stream's own)");
      }
    }
  }
  const current::provider_list& list = current::providers();
  auto saved = std::make_unique<current::saved_streams>();
  saved->list = &list;
  saved->previous.reserve(list.entries.size());
  saved->expected.resize(list.entries.size());
  saved->stream = stream.get();
  saved->device = device_;
  for (std::size_t i = 0; i < list.entries.size(); ++i) {
    const current::provider& p = list.entries[i];
    const bool by_token = p.table.enter != nullptr;
    if (p.direct.kind == current::direct_kind::own) saved->own = static_cast<std::ptrdiff_t>(i);
    if (!by_token && p.table.set == nullptr) {
      // Read-only: what it answers now is what it answers while nothing inside changes it.
      current::expectation& e = saved->expected[i];
      e.known = p.table.get(p.table.context, device_, &e.stream) == STREAMLIKE_CURRENT_STREAM_OK;
      continue;
    }
    void* previous = nullptr;
    int status = STREAMLIKE_CURRENT_STREAM_OK;
    if (by_token) {
      status = p.table.enter(p.table.context, device_, stream.get(), &previous);
    } else {
      status = p.table.get(p.table.context, device_, &previous);
      if (status == STREAMLIKE_CURRENT_STREAM_OK) status = p.table.set(p.table.context, device_, stream.get());
    }
    if (status == STREAMLIKE_CURRENT_STREAM_UNAVAILABLE) continue;
    if (status != STREAMLIKE_CURRENT_STREAM_OK) {
      current::restore(*saved, device_);
      throw error(cudaErrorUnknown, "scoped_current_stream",
                  "the current-stream provider '" + p.name + "' failed to read or set the current stream of device " +
                      std::to_string(device_));
    }
    saved->previous.push_back(current::saved_stream{&p, previous, by_token});
    // streamlike's own slot only ever holds what scopes set: nothing to tell apart there.
    if (p.direct.kind != current::direct_kind::own) saved->expected[i] = current::expectation{stream.get(), true};
  }
  saved->outer = current::innermost_scope;
  current::innermost_scope = saved.get();
  saved_ = saved.release();
}

scoped_current_stream::~scoped_current_stream() {
  auto* saved = static_cast<current::saved_streams*>(saved_);
  // Out of the thread's chain, wherever it is in it (a Python block may end out of order).
  for (current::saved_streams** link = &current::innermost_scope; *link != nullptr; link = &(*link)->outer) {
    if (*link == saved) {
      *link = saved->outer;
      break;
    }
  }
  current::restore(*saved, device_);
  delete saved;
}

std::vector<current_stream_provider_info> current_stream_providers() {
  std::vector<current_stream_provider_info> out;
  for (const current::provider& p : current::providers().entries)
    out.push_back(
        current_stream_provider_info{p.name, p.table.priority, p.table.set != nullptr || p.table.enter != nullptr});
  return out;
}

std::vector<current_stream_answer> current_stream_conflicts(int device) {
  device = current::resolve_device(device, "current_stream_conflicts");
  const current::provider_list& list = current::providers();
  const current::answer chosen = current::current_answer(list, device);
  std::vector<current_stream_answer> out;
  bool disagree = false;
  for (const current::provider& p : list.entries) {
    void* stream = nullptr;
    if (p.table.get(p.table.context, device, &stream) != STREAMLIKE_CURRENT_STREAM_OK) continue;
    const stream_view view{static_cast<cudaStream_t>(stream)};
    if (!out.empty() && !same_current_stream(view, out.front().stream)) disagree = true;
    if (chosen.by != nullptr && (&p == chosen.by || p.name == chosen.by->name)) {
      out.insert(out.begin(), current_stream_answer{p.name, view});
    } else {
      out.push_back(current_stream_answer{p.name, view});
    }
  }
  if (!disagree) {
    for (const auto& a : out)
      if (!same_current_stream(a.stream, out.front().stream)) disagree = true;
  }
  if (!disagree) out.clear();
  return out;
}

namespace {

void check_provider(const streamlike_current_stream_provider& provider) {
  constexpr std::uint32_t known = STREAMLIKE_CURRENT_STREAM_PROVIDER_VERSION;
  if (provider.version == 0) {
    throw std::invalid_argument("streamlike::register_current_stream_provider: provider version 0 is no version (an "
                                "unfilled table?); expected 1 to " +
                                std::to_string(known) + " (STREAMLIKE_CURRENT_STREAM_PROVIDER_VERSION)");
  }
  if (provider.version > known) {
    throw std::invalid_argument("streamlike::register_current_stream_provider: unknown provider version " +
                                std::to_string(provider.version) + "; this streamlike knows versions 1 to " +
                                std::to_string(known));
  }
  // Version 1's table is the whole struct this streamlike knows (later versions add at the end).
  if (provider.struct_size < sizeof(streamlike_current_stream_provider)) {
    throw std::invalid_argument("streamlike::register_current_stream_provider: struct_size " +
                                std::to_string(provider.struct_size) + " is smaller than version " +
                                std::to_string(provider.version) + "'s table (" +
                                std::to_string(sizeof(streamlike_current_stream_provider)) +
                                " bytes): set struct_size = sizeof(streamlike_current_stream_provider)");
  }
  if (provider.name == nullptr || provider.name[0] == '\0')
    throw std::invalid_argument("streamlike::register_current_stream_provider: the provider has no name");
  if ((provider.enter == nullptr) != (provider.leave == nullptr)) {
    throw std::invalid_argument(std::string("streamlike::register_current_stream_provider: the provider '") +
                                provider.name + "' has only one of enter and leave (give both or neither)");
  }
  if (provider.get == nullptr) {
    throw std::invalid_argument(std::string("streamlike::register_current_stream_provider: the provider '") +
                                provider.name + "' has no get function (set may be null, get may not)");
  }
}

} // namespace

void register_current_stream_provider(const streamlike_current_stream_provider& provider) {
  check_provider(provider);
  current::registry& r = current::the_registry();
  (void)current::providers(); // the first list exists
  const std::lock_guard<std::mutex> lock(r.write);
  std::vector<current::provider> entries = current::copy_of(r);
  const std::string name = provider.name;
  if (std::any_of(entries.begin(), entries.end(), [&](const current::provider& p) { return p.name == name; })) {
    throw std::invalid_argument("streamlike::register_current_stream_provider: a provider named '" + name +
                                "' is already registered (unregister it first)");
  }
  entries.push_back(current::provider{provider, name, {}});
  current::publish(r, std::move(entries));
}

bool unregister_current_stream_provider(std::string_view name) {
  if (name == current::own_name) {
    throw std::invalid_argument("streamlike::unregister_current_stream_provider: streamlike's own provider "
                                "('streamlike') cannot be removed");
  }
  current::registry& r = current::the_registry();
  (void)current::providers();
  const std::lock_guard<std::mutex> lock(r.write);
  std::vector<current::provider> entries = current::copy_of(r);
  const auto found =
      std::find_if(entries.begin(), entries.end(), [&](const current::provider& p) { return p.name == name; });
  if (found == entries.end()) return false;
  entries.erase(found);
  current::publish(r, std::move(entries));
  return true;
}

} // namespace streamlike

extern "C" {

STREAMLIKE_API int streamlike_current_stream_register(const streamlike_current_stream_provider* provider) {
  if (provider == nullptr) return STREAMLIKE_CURRENT_STREAM_BAD_PROVIDER;
  try {
    streamlike::register_current_stream_provider(*provider);
    return STREAMLIKE_CURRENT_STREAM_REGISTERED;
  } catch (const std::invalid_argument& e) {
    return std::strstr(e.what(), "already registered") != nullptr ? STREAMLIKE_CURRENT_STREAM_NAME_TAKEN
                                                                  : STREAMLIKE_CURRENT_STREAM_BAD_PROVIDER;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_BAD_PROVIDER;
  }
}

STREAMLIKE_API int streamlike_current_stream_get(int32_t device, void** stream) {
  if (stream == nullptr) return STREAMLIKE_CURRENT_STREAM_FAILED;
  try {
    *stream = streamlike::current_stream(device).get();
    return STREAMLIKE_CURRENT_STREAM_OK;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_FAILED;
  }
}

STREAMLIKE_API int streamlike_current_stream_set(int32_t device, void* stream, void** token) {
  if (token == nullptr) return STREAMLIKE_CURRENT_STREAM_FAILED;
  try {
    const streamlike::stream_view view{static_cast<cudaStream_t>(stream)};
    *token =
        device < 0 ? new streamlike::scoped_current_stream(view) : new streamlike::scoped_current_stream(view, device);
    return STREAMLIKE_CURRENT_STREAM_OK;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_FAILED;
  }
}

STREAMLIKE_API int streamlike_current_stream_restore(void* token) {
  if (token == nullptr) return STREAMLIKE_CURRENT_STREAM_FAILED;
  delete static_cast<streamlike::scoped_current_stream*>(token); // the scope's end (never throws)
  return STREAMLIKE_CURRENT_STREAM_OK;
}

STREAMLIKE_API int streamlike_current_stream_unregister(const char* name) {
  if (name == nullptr) return STREAMLIKE_CURRENT_STREAM_NOT_FOUND;
  try {
    return streamlike::unregister_current_stream_provider(name) ? STREAMLIKE_CURRENT_STREAM_REGISTERED
                                                                : STREAMLIKE_CURRENT_STREAM_NOT_FOUND;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_NOT_FOUND;
  }
}

static int check_enabled_for_c(void) { return streamlike::current_stream_check_enabled() ? 1 : 0; }

STREAMLIKE_API const streamlike_current_stream_api* streamlike_current_stream_api_table(void) {
  static constexpr streamlike_current_stream_api table = {
      STREAMLIKE_CURRENT_STREAM_API_VERSION, sizeof(streamlike_current_stream_api),
      &streamlike_current_stream_get,        &streamlike_current_stream_set,
      &streamlike_current_stream_restore,    &streamlike_current_stream_register,
      &streamlike_current_stream_unregister, &check_enabled_for_c};
  return &table;
}

} // extern "C"
