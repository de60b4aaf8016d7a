// The registry of current-stream providers: the published list current_stream() reads, its first
// entry (streamlike's own provider), and registration by hand (register_current_stream_provider,
// unregister_current_stream_provider, current_stream_providers). Frameworks found on the loader
// join it through src/current_stream_discovery.cpp.
#include "current_stream_discovery.hpp"
#include "current_stream_own.hpp"
#include "current_stream_registry.hpp"
#include "current_stream_shared.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/error.hpp>

#include <algorithm>
#include <cstddef>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace streamlike {

namespace detail::current {

constinit std::atomic<const provider_list*> published{nullptr};

registry& the_registry() noexcept {
  static registry* r = new registry; // never destroyed: providers may be asked during exit
  return *r;
}

void publish(registry& r, std::vector<provider> entries) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const provider& a, const provider& b) { return a.table.priority < b.table.priority; });
  auto* list = new provider_list{std::move(entries), {}, r.all_found.load(std::memory_order_relaxed)};
  list->getters.reserve(list->entries.size());
  for (provider& p : list->entries) {
    p.table.name = p.name.c_str(); // after the move: stable now
    list->getters.push_back(getter{p.direct.kind, p.table.get, p.table.context, p.direct.torch, p.direct.tvm_ffi});
  }
  const auto kind_at = [&](std::size_t i) { return list->getters[i].kind; };
  if (list->getters.size() == 1 && kind_at(0) == direct_kind::own) {
    list->shape = list_shape::own_only;
  } else if (list->getters.size() == 2 && kind_at(0) == direct_kind::torch && kind_at(1) == direct_kind::own) {
    list->shape = list_shape::torch_then_own;
    list->torch = list->getters[0].torch;
  } else if (list->getters.size() == 1 && kind_at(0) == direct_kind::forwarded) {
    list->shape = list_shape::forwarded;
    list->forward = list->entries[0].direct.forward;
  }
  list->replaced = r.list.load(std::memory_order_relaxed);
  r.list.store(list, std::memory_order_release);
}

std::vector<provider> copy_of(const registry& r) {
  const provider_list* list = r.list.load(std::memory_order_acquire);
  return list != nullptr ? list->entries : std::vector<provider>{};
}

namespace {

/// current_stream() of a copy that forwards: the registry's answer for a device this copy checked.
int forwarded_get(void* context, std::int32_t device, void** stream) {
  return static_cast<const streamlike_current_stream_registry*>(context)->current(device, stream);
}

/// The first list: streamlike's own provider alone; in a copy that forwards to another copy's
/// registry, that registry's answer alone, complete (that registry looks for frameworks).
const provider_list* initial_list(registry& r) {
  const streamlike_current_stream_registry* to = forwarded();
  const std::lock_guard<std::mutex> lock(r.write);
  if (const provider_list* list = r.list.load(std::memory_order_acquire)) return list;
  std::vector<provider> entries;
  if (to != nullptr) {
    streamlike_current_stream_provider table = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
    table.priority = STREAMLIKE_CURRENT_STREAM_PRIORITY_STREAMLIKE;
    table.get = &forwarded_get;
    table.context = const_cast<streamlike_current_stream_registry*>(to);
    entries.push_back(
        provider{table, forwarded_name, direct_get{direct_kind::forwarded, nullptr, nullptr, to->current}});
    r.all_found.store(true, std::memory_order_relaxed);
  } else {
    entries.push_back(provider{own_provider(), own_name, direct_get{direct_kind::own, nullptr, nullptr}});
  }
  publish(r, std::move(entries));
  return r.list.load(std::memory_order_acquire);
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
    look_and_publish(r, throttled);
    list = r.list.load(std::memory_order_acquire);
  }
  return *list;
}

} // namespace

void look_and_publish(registry& r, bool throttled) noexcept {
  std::optional<framework_look> look;
  if (!look_for_frameworks(r, throttled, look)) return;
  try {
    const std::lock_guard<std::mutex> lock(r.write); // held only to publish: no loader call inside
    std::vector<provider> entries = copy_of(r);
    bool added = false;
    for (provider& p : look->found) {
      // A provider registered under the same name by hand (e.g. a test's) keeps its place.
      if (std::any_of(entries.begin(), entries.end(), [&](const provider& e) { return e.name == p.name; })) continue;
      entries.push_back(std::move(p));
      added = true;
    }
    if (look->complete) r.all_found.store(true, std::memory_order_relaxed);
    // A complete list is published even when nothing was added (a framework found under a name
    // registered by hand), so that readers stop looking.
    if (added || look->complete) publish(r, std::move(entries));
  } catch (...) {
    return; // out of memory: the look forgets what it found, and a later look publishes it
  }
  look->published();
}

const provider_list& providers(bool throttled) noexcept {
  // The published list as current_stream() reads it (src/current_stream.cpp), else a look.
  const provider_list* list = published.load(std::memory_order_acquire);
  if (list != nullptr && (list->complete || loader_quiet())) [[likely]]
    return *list;
  return providers_looking(throttled);
}

} // namespace detail::current

namespace current = detail::current;

std::vector<current_stream_provider_info> current_stream_providers() {
  std::vector<current_stream_provider_info> out;
  if (const streamlike_current_stream_registry* to = current::forwarded()) {
    const auto each = [](void* context, const char* name, std::int32_t priority, int can_set) {
      static_cast<std::vector<current_stream_provider_info>*>(context)->push_back(
          current_stream_provider_info{name, priority, can_set != 0});
    };
    if (to->providers(each, &out) != STREAMLIKE_CURRENT_STREAM_OK)
      throw error(cudaErrorUnknown, "current_stream_providers", "the process's current-stream registry failed");
    return out;
  }
  for (const current::provider& p : current::providers().entries)
    out.push_back(
        current_stream_provider_info{p.name, p.table.priority, p.table.set != nullptr || p.table.enter != nullptr});
  return out;
}

namespace {

/// The size of the fields of provider version 1.0: every field this streamlike reads.
constexpr std::size_t minor0_size =
    offsetof(streamlike_current_stream_provider, leave) + sizeof(streamlike_current_stream_provider::leave);
static_assert(minor0_size == sizeof(streamlike_current_stream_provider), "minor 0 is the table this streamlike knows");

/// Why `provider` cannot be registered (written to `refusal`), or true where it can: the versions
/// and the size first, before any other field is read.
bool check_provider(const streamlike_current_stream_provider& provider, std::string& refusal) {
  // Any minor of the major this streamlike reads: every field it reads is in minor 0, and a later
  // minor only appends (the copy the registry keeps is of the fields it knows).
  constexpr std::uint32_t known = STREAMLIKE_CURRENT_STREAM_PROVIDER_MAJOR_VERSION;
  const std::string where = "streamlike::register_current_stream_provider: ";
  if (provider.major_version == 0) {
    refusal = where + "provider major version 0 is no version (an unfilled table?); expected " + std::to_string(known) +
              " (STREAMLIKE_CURRENT_STREAM_PROVIDER_MAJOR_VERSION)";
  } else if (provider.major_version != known) {
    refusal = where + "unknown provider major version " + std::to_string(provider.major_version) +
              "; this streamlike reads major version " + std::to_string(known) + " (any minor)";
  } else if (provider.struct_size < minor0_size) {
    // Copied by the fields this streamlike knows (all of minor 0), so a shorter table is refused
    // before any field after the size is read.
    refusal = where + "the provider table's struct_size is " + std::to_string(provider.struct_size) +
              " bytes, shorter than the " + std::to_string(minor0_size) + " bytes of version " + std::to_string(known) +
              ".0 (its minor_version is " + std::to_string(provider.minor_version) +
              "); expected sizeof(streamlike_current_stream_provider): fill the table with "
              "STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT";
  } else if (provider.name == nullptr || provider.name[0] == '\0') {
    refusal = where + "the provider has no name";
  } else if ((provider.enter == nullptr) != (provider.leave == nullptr)) {
    refusal = where + "the provider '" + provider.name + "' has only one of enter and leave (give both or neither)";
  } else if (provider.get == nullptr) {
    refusal = where + "the provider '" + provider.name + "' has no get function (set may be null, get may not)";
  } else {
    return true;
  }
  return false;
}

} // namespace

namespace detail::current {

registration register_provider(const streamlike_current_stream_provider& provider, std::string& refusal) {
  if (!check_provider(provider, refusal)) return registration::bad_provider;
  if (const streamlike_current_stream_registry* to = forwarded()) {
    registry_message message;
    const int status = to->register_provider(&provider, message.text, sizeof message.text);
    switch (status) {
      case STREAMLIKE_CURRENT_STREAM_OK: return registration::registered;
      case STREAMLIKE_CURRENT_STREAM_NAME_TAKEN: refusal = message.text; return registration::name_taken;
      case STREAMLIKE_CURRENT_STREAM_REGISTRY_INVALID_ARGUMENT:
        refusal = message.text;
        return registration::bad_provider;
      default: throw_forwarded(status, "register_current_stream_provider", message);
    }
  }
  registry& r = the_registry();
  (void)providers(); // the first list exists
  const std::lock_guard<std::mutex> lock(r.write);
  std::vector<current::provider> entries = copy_of(r);
  const std::string name = provider.name;
  if (std::any_of(entries.begin(), entries.end(), [&](const current::provider& p) { return p.name == name; })) {
    refusal = "streamlike::register_current_stream_provider: a provider named '" + name +
              "' is already registered (unregister it first)";
    return registration::name_taken;
  }
  entries.push_back(current::provider{provider, name, {}});
  publish(r, std::move(entries));
  return registration::registered;
}

} // namespace detail::current

void register_current_stream_provider(const streamlike_current_stream_provider& provider) {
  std::string refusal;
  if (current::register_provider(provider, refusal) != current::registration::registered)
    throw std::invalid_argument(refusal);
}

bool unregister_current_stream_provider(std::string_view name) {
  if (name == current::own_name) {
    throw std::invalid_argument("streamlike::unregister_current_stream_provider: streamlike's own provider "
                                "('streamlike') cannot be removed");
  }
  if (const streamlike_current_stream_registry* to = current::forwarded()) {
    current::registry_message message;
    const int status = to->unregister_provider(std::string(name).c_str(), message.text, sizeof message.text);
    if (status == STREAMLIKE_CURRENT_STREAM_NOT_FOUND) return false;
    if (status != STREAMLIKE_CURRENT_STREAM_OK)
      current::throw_forwarded(status, "unregister_current_stream_provider", message);
    return true;
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
