// current_stream(), scoped_current_stream and the provider registry (docs/current-stream.md).
#include "current_stream_registry.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/error.hpp>

#include <cuda_runtime_api.h>
#include <link.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <climits>
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

struct own_entry {
  void* stream = nullptr;
};

thread_local std::vector<own_entry> own_streams; // indexed by device; grows on set

int own_get(void*, int32_t device, void** stream) {
  *stream = static_cast<std::size_t>(device) < own_streams.size() ? own_streams[static_cast<std::size_t>(device)].stream
                                                                  : nullptr;
  return STREAMLIKE_CURRENT_STREAM_OK;
}

int own_set(void*, int32_t device, void* stream) {
  try {
    if (static_cast<std::size_t>(device) >= own_streams.size()) {
      if (stream == nullptr) return STREAMLIKE_CURRENT_STREAM_OK; // unset already reads as 0
      own_streams.resize(static_cast<std::size_t>(device) + 1);
    }
    own_streams[static_cast<std::size_t>(device)].stream = stream;
    return STREAMLIKE_CURRENT_STREAM_OK;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_FAILED; // out of memory
  }
}

constexpr const char* own_name = "streamlike";

// --- The registry -----------------------------------------------------------------------------

struct registry {
  std::mutex write;
  std::atomic<const provider_list*> list{nullptr};
  // Built-in frameworks: found once, then never looked for again.
  bool torch_found = false;
  bool tvm_ffi_found = false;
  std::atomic<bool> all_found{false};
  std::atomic<unsigned long long> seen_loads{~0ULL}; // dlpi_adds at the last look
  std::atomic<long long> last_tick{-1};              // the coarse clock's tick at the last look
};

registry& the_registry() noexcept {
  static registry* r = new registry; // never destroyed: providers may be asked during exit
  return *r;
}

/// Publishes `entries` (sorted here) as the new list; the old one stays valid forever.
void publish(registry& r, std::vector<provider> entries) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const provider& a, const provider& b) { return a.table.priority < b.table.priority; });
  auto* list = new provider_list{std::move(entries)};
  for (provider& p : list->entries) p.table.name = p.name.c_str(); // after the move: stable now
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
  own.priority = STREAMLIKE_CURRENT_STREAM_PRIORITY_STREAMLIKE;
  own.get = &own_get;
  own.set = &own_set;
  std::vector<provider> entries;
  entries.push_back(provider{own, own_name});
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
  try {
    const std::lock_guard<std::mutex> lock(r.write);
    if (loads == r.seen_loads.load(std::memory_order_relaxed)) return;
    std::vector<provider> entries = copy_of(r);
    bool added = false;
    const auto add = [&](bool& found, bool (*find)(streamlike_current_stream_provider&)) {
      if (found) return;
      streamlike_current_stream_provider table{};
      if (!find(table)) return;
      found = true;
      const std::string name = table.name;
      // A provider registered under the same name by hand (e.g. a test's) keeps its place.
      if (std::any_of(entries.begin(), entries.end(), [&](const provider& p) { return p.name == name; })) return;
      entries.push_back(provider{table, name});
      added = true;
    };
    add(r.torch_found, &providers::find_torch);
    add(r.tvm_ffi_found, &providers::find_tvm_ffi);
    if (added) publish(r, std::move(entries));
    r.seen_loads.store(loads, std::memory_order_relaxed);
    if (r.torch_found && r.tvm_ffi_found) r.all_found.store(true, std::memory_order_relaxed);
  } catch (...) {
    // Out of memory: look again next time.
  }
}

} // namespace

const provider_list& providers(bool throttled) noexcept {
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
  if (!r.all_found.load(std::memory_order_relaxed)) [[unlikely]] {
    look_for_frameworks(r, throttled);
    list = r.list.load(std::memory_order_acquire);
  }
  return *list;
}

answer current_answer(const provider_list& list, int device) noexcept {
  answer first;
  bool have_first = false;
  for (const provider& p : list.entries) {
    void* stream = nullptr;
    if (p.table.get(p.table.context, device, &stream) != STREAMLIKE_CURRENT_STREAM_OK) continue;
    if (!is_default_handle(stream)) return answer{stream, &p};
    if (!have_first) {
      first = answer{stream, &p};
      have_first = true;
    }
  }
  return first;
}

int resolve_device(int device, const char* operation) {
  if (device >= 0) return device;
  if (device != current_device) {
    throw std::invalid_argument(std::string("streamlike::") + operation +
                                ": device must be a device ordinal (>= 0) or " +
                                "streamlike::current_device (-1), got " + std::to_string(device));
  }
  int current = 0;
  detail::throw_if_error(cudaGetDevice(&current), std::string(operation) + ": cudaGetDevice");
  return current;
}

namespace {

/// One provider a scope set: its previous stream (get + set), or the token its enter gave.
struct saved_stream {
  const provider* by;
  void* previous_or_token;
  bool token;
};

/// What scoped_current_stream saved: the list it set, and what each provider had before.
struct saved_streams {
  const provider_list* list;
  std::vector<saved_stream> previous; // in the order set
};

/// Restores `saved` in reverse order: into the providers still registered (by name, when the list
/// changed meanwhile), never throwing.
void restore(const saved_streams& saved, int device) noexcept {
  const provider_list& now = *the_registry().list.load(std::memory_order_acquire);
  for (auto it = saved.previous.rbegin(); it != saved.previous.rend(); ++it) {
    const provider* p = it->by;
    if (&now != saved.list) {
      const auto found =
          std::find_if(now.entries.begin(), now.entries.end(), [&](const provider& q) { return q.name == p->name; });
      if (found == now.entries.end()) continue;
      p = &*found;
    }
    if (it->token) {
      if (p->table.leave != nullptr) (void)p->table.leave(p->table.context, device, it->previous_or_token);
    } else if (p->table.set != nullptr) {
      (void)p->table.set(p->table.context, device, it->previous_or_token);
    }
  }
}

} // namespace

} // namespace detail::current

namespace current = detail::current;

stream_view current_stream(int device) {
  device = current::resolve_device(device, "current_stream");
  return stream_view{
      static_cast<cudaStream_t>(current::current_answer(current::providers(/*throttled=*/true), device).stream)};
}

scoped_current_stream::scoped_current_stream(stream_view stream, int device, bool device_of_stream) : stream_(stream) {
  if (device_of_stream && !stream.is_default()) {
    device_ = stream.device(); // capture-safe (the stream's context)
  } else {
    device_ = current::resolve_device(device, "scoped_current_stream");
  }
  const current::provider_list& list = current::providers();
  auto saved = std::make_unique<current::saved_streams>();
  saved->list = &list;
  saved->previous.reserve(list.entries.size());
  for (const current::provider& p : list.entries) {
    const bool by_token = p.table.enter != nullptr;
    if (!by_token && p.table.set == nullptr) continue;
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
  }
  saved_ = saved.release();
}

scoped_current_stream::~scoped_current_stream() {
  auto* saved = static_cast<current::saved_streams*>(saved_);
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
    if (!out.empty() && view != out.front().stream) disagree = true;
    if (&p == chosen.by) {
      out.insert(out.begin(), current_stream_answer{p.name, view});
    } else {
      out.push_back(current_stream_answer{p.name, view});
    }
  }
  if (!disagree) {
    for (const auto& a : out)
      if (a.stream != out.front().stream) disagree = true;
  }
  if (!disagree) out.clear();
  return out;
}

namespace {

void check_provider(const streamlike_current_stream_provider& provider) {
  if (provider.version != STREAMLIKE_CURRENT_STREAM_PROVIDER_VERSION) {
    throw std::invalid_argument("streamlike::register_current_stream_provider: unknown provider version " +
                                std::to_string(provider.version) + " (this streamlike knows version " +
                                std::to_string(STREAMLIKE_CURRENT_STREAM_PROVIDER_VERSION) + ")");
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
  entries.push_back(current::provider{provider, name});
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

STREAMLIKE_API int streamlike_current_stream_unregister(const char* name) {
  if (name == nullptr) return STREAMLIKE_CURRENT_STREAM_NOT_FOUND;
  try {
    return streamlike::unregister_current_stream_provider(name) ? STREAMLIKE_CURRENT_STREAM_REGISTERED
                                                                : STREAMLIKE_CURRENT_STREAM_NOT_FOUND;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_NOT_FOUND;
  }
}

} // extern "C"
