// The registry of current-stream providers (src/current_stream_registry.cpp), shared with
// current_stream() and its scopes (src/current_stream.cpp), the look for frameworks
// (src/current_stream_discovery.cpp), the check and the built-in providers
// (src/current_stream_torch.cpp, src/current_stream_tvm_ffi.cpp).
#ifndef STREAMLIKE_SRC_CURRENT_STREAM_REGISTRY_HPP
#define STREAMLIKE_SRC_CURRENT_STREAM_REGISTRY_HPP

#include "devices.hpp"

#include <streamlike/c/current_stream_provider.h>
#include <streamlike/stream_view.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace streamlike::detail::current {

/// How current_stream() asks a provider: through its table, or (the built-in ones) straight into
/// the framework's function or streamlike's thread-local, one indirect call fewer.
/// `forwarded`: the process's registry of another copy, asked through its table's `current`.
enum class direct_kind : unsigned char { table, torch, tvm_ffi, own, forwarded };

/// The built-in providers' framework functions, called directly by current_stream().
using torch_get_fn = std::int32_t (*)(std::int32_t device_index, void** ret_stream);
using tvm_get_fn = void* (*)(std::int32_t device_type, std::int32_t device_id);
using registry_current_fn = int (*)(std::int32_t device, void** stream); // streamlike_current_stream_registry::current

struct direct_get {
  direct_kind kind = direct_kind::table;
  torch_get_fn torch = nullptr;
  tvm_get_fn tvm_ffi = nullptr;
  registry_current_fn forward = nullptr;
};

struct provider {
  streamlike_current_stream_provider table; // table.name points into `name`
  std::string name;
  direct_get direct{};
};

/// What current_stream() reads of one provider: the table's get, or a direct function.
struct getter {
  direct_kind kind;
  int (*get)(void* context, std::int32_t device, void** stream);
  void* context;
  torch_get_fn torch;
  tvm_get_fn tvm_ffi;
};

/// The lists current_stream() reads without walking them, those of the common processes:
/// streamlike's own alone (no framework loaded), torch's then streamlike's own (torch alone), and
/// another copy's registry alone (a copy that forwards).
enum class list_shape : unsigned char { any, own_only, torch_then_own, forwarded };

/// An immutable list, sorted in asking order. Lists are never freed: a reader holds no lock and a
/// list it is walking stays valid whatever registers meanwhile (registrations are rare).
/// `getters` is the same list packed for current_stream() (what one call reads: 40 bytes a provider);
/// `complete`: every built-in framework was found when the list was made, so nobody need look for
/// newly loaded ones again.
struct provider_list {
  std::vector<provider> entries;
  std::vector<getter> getters;
  bool complete = false;
  list_shape shape = list_shape::any;
  torch_get_fn torch = nullptr;          // torch_then_own: getters[0].torch, one load nearer current_stream()
  registry_current_fn forward = nullptr; // forwarded: the registry's current
  // The list this one replaced: lists are never freed (a reader may still hold one), and the
  // chain keeps every one reachable from the published pointer (no leak, for LeakSanitizer too).
  const provider_list* replaced = nullptr;
};

/// The list current_stream() reads: one acquire load, no function-local static's guard (defined in
/// src/current_stream_registry.cpp; hidden, so reading it takes no indirection).
[[gnu::visibility("hidden")]] extern constinit std::atomic<const provider_list*> published;

/// The registry's writers' state: who writes a new list, and what the look for frameworks found.
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

/// The one registry, never destroyed: providers may be asked during exit.
[[nodiscard]] registry& the_registry() noexcept;

/// Publishes `entries` (sorted here) as the new list; the old one stays valid forever. Called
/// under r.write.
void publish(registry& r, std::vector<provider> entries);

/// The entries of the list published now (none before the first).
[[nodiscard]] std::vector<provider> copy_of(const registry& r);

/// Looks for built-in frameworks loaded since the last look (src/current_stream_discovery.cpp) and
/// publishes those found. Throttled: at most once per tick of the coarse clock.
void look_and_publish(registry& r, bool throttled) noexcept;

/// The current list, after looking for built-in frameworks loaded since the last look. Throttled
/// (current_stream(), the check): at most one look per tick of the coarse clock, so a framework
/// loaded a few milliseconds ago may not be seen yet; scopes and listings always look.
[[nodiscard]] const provider_list& providers(bool throttled = false) noexcept;

/// What registering a provider table came to.
enum class registration { registered, bad_provider, name_taken };

/// Registers a copy of `provider` in the process's registry (forwarded where another copy's
/// serves), or says why not in `refusal` (what was wrong, what is expected): the one
/// implementation behind register_current_stream_provider, the C entry and the registry's table,
/// each of which reports the status its own way. Throws only what the registry's failure throws
/// (out of memory, another copy's registry failing).
[[nodiscard]] registration register_provider(const streamlike_current_stream_provider& provider, std::string& refusal);

/// current_stream()'s answer and the provider that gave it (nullptr: none answered).
struct answer {
  void* stream = nullptr;
  const provider* by = nullptr;
};
[[nodiscard]] answer current_answer(const provider_list& list, int device) noexcept;

/// The current stream of `device` (0 or above, not checked against the device count), or false
/// where a copy forwarded to refused: current_stream(device, std::nothrow)'s body, and the
/// registry's C entry's for a device the count holds, so that a copy forwarding to this one pays
/// no throwing frame and no exported call.
[[nodiscard]] bool current_on(int device, void*& stream) noexcept;

/// Throws std::invalid_argument for a device below -1, naming `operation`.
[[noreturn]] void throw_bad_device(int device, const char* operation);

/// Throws std::invalid_argument naming `operation`, `device` and the range 0..count-1 when the
/// process has no such device, or streamlike::error when the device count cannot be read for
/// another reason than CUDA's absence (no driver, no device: the device is taken as given). A
/// device below the count once read (devices::count_if_known) needs no such check.
void check_device_slow(int device, const char* operation);

/// The device of `stream`, or `otherwise` where CUDA is absent (no driver, no device); throws
/// streamlike::error for a stream CUDA refuses to describe.
[[nodiscard]] int device_of_or(stream_view stream, int otherwise);

/// Set once the current device was read: the process has a driver that answers, and keeps it.
extern std::atomic<bool> current_device_read;

/// `device`, or the current device for current_device; throws std::invalid_argument (below -1, or
/// a device the process does not have: the range is named) or streamlike::error (the current
/// device or the device count cannot be read), naming `operation`.
[[nodiscard]] inline int resolve_device(int device, const char* operation) {
  if (device >= 0) [[likely]] {
    if (static_cast<unsigned>(device) >= static_cast<unsigned>(devices::count_if_known())) [[unlikely]]
      check_device_slow(device, operation);
    return device;
  }
  if (device != -1) throw_bad_device(device, operation);
  const int current = devices::current_driver_first(operation);
  if (!current_device_read.load(std::memory_order_relaxed)) [[unlikely]]
    current_device_read.store(true, std::memory_order_relaxed);
  return current;
}

} // namespace streamlike::detail::current

namespace streamlike::detail::providers {
/// Fills `out` with torch's provider when libtorch_cuda is loaded and has the stable C shim's
/// functions (src/current_stream_torch.cpp), and `direct` with its getter.
[[nodiscard]] bool find_torch(streamlike_current_stream_provider& out, current::direct_get& direct) noexcept;
/// Fills `out` with tvm-ffi's provider when libtvm_ffi is loaded (src/current_stream_tvm_ffi.cpp),
/// and `direct` with its getter.
[[nodiscard]] bool find_tvm_ffi(streamlike_current_stream_provider& out, current::direct_get& direct) noexcept;
} // namespace streamlike::detail::providers

#endif // STREAMLIKE_SRC_CURRENT_STREAM_REGISTRY_HPP
