// One current-stream registry per process (docs/current-stream.md, "One registry per process"):
// the first copy of streamlike to start publishes its registry as a versioned, sized C table
// (streamlike/c/current_stream_registry.h) whose address an environment variable names; every
// later copy finds it there and forwards to it. The environment is the one place every copy can
// reach without Python and whatever the loader's scopes: a copy inside an extension module loaded
// RTLD_LOCAL is invisible to dlsym(RTLD_DEFAULT), and a symbol exported for the purpose would be
// hidden by modules linked with --exclude-libs or a version script.
//
// The decision is made in the copy's static initializer, which the dynamic loader runs under its
// lock (dlopen) or before main, so two copies never decide at once.
#include "current_stream_shared.hpp"

#include <streamlike/c/current_stream_registry.h>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_check.hpp>
#include <streamlike/detail/export.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/error.hpp>
#include <streamlike/stream_view.hpp>

#include "current_stream_registry.hpp"
#include "current_stream_scope.hpp"
#include "devices.hpp"

#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace streamlike::detail::current {

namespace {

void write_message(char* out, std::size_t size, const char* text) noexcept {
  if (out == nullptr || size == 0) return;
  std::snprintf(out, size, "%s", text);
}

/// The status and message of the exception being handled.
int status_of_current_exception(char* message, std::size_t size) noexcept {
  try {
    throw;
  } catch (const std::invalid_argument& e) {
    write_message(message, size, e.what());
    return STREAMLIKE_CURRENT_STREAM_REGISTRY_INVALID_ARGUMENT;
  } catch (const std::exception& e) {
    write_message(message, size, e.what());
    return STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED;
  } catch (...) {
    write_message(message, size, "unknown exception");
    return STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED;
  }
}

// --- This copy's table: its own registry, for the copies that forward to it -------------------

static_assert(STREAMLIKE_CURRENT_STREAM_REGISTRY_INVALID_ARGUMENT != STREAMLIKE_CURRENT_STREAM_NOT_FOUND &&
                  STREAMLIKE_CURRENT_STREAM_REGISTRY_INVALID_ARGUMENT != STREAMLIKE_CURRENT_STREAM_NAME_TAKEN &&
                  STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED != STREAMLIKE_CURRENT_STREAM_NOT_FOUND &&
                  STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED != STREAMLIKE_CURRENT_STREAM_NAME_TAKEN &&
                  STREAMLIKE_CURRENT_STREAM_REGISTRY_INVALID_ARGUMENT != STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED,
              "each status the table returns is its own");

int table_current(int32_t device, void** stream) {
  if (stream == nullptr || device < current_device) return STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED;
  // A device the count holds needs no check that could throw: the forwarding copies' common call.
  if (device >= 0 && device < devices::count_if_known()) [[likely]]
    return current_on(device, *stream) ? STREAMLIKE_CURRENT_STREAM_OK : STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED;
  try {
    *stream = streamlike::current_stream(device).get();
    return STREAMLIKE_CURRENT_STREAM_OK;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED;
  }
}

int table_answer(int32_t device, void** stream, char* name, std::size_t name_size) {
  if (stream == nullptr || device < 0) return STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED;
  try {
    const answer a = current_answer(providers(/*throttled=*/true), device);
    *stream = a.stream;
    write_message(name, name_size, a.by != nullptr ? a.by->name.c_str() : "");
    return STREAMLIKE_CURRENT_STREAM_OK;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED;
  }
}

int table_enter(int32_t device, void* stream, void** token, char* message, std::size_t size) {
  if (token == nullptr || device < 0) {
    write_message(message, size, "streamlike: scoped_current_stream: no token, or a device below 0");
    return STREAMLIKE_CURRENT_STREAM_REGISTRY_INVALID_ARGUMENT;
  }
  try {
    *token = new scoped_current_stream(stream_view{static_cast<cudaStream_t>(stream)}, device);
    return STREAMLIKE_CURRENT_STREAM_OK;
  } catch (...) {
    return status_of_current_exception(message, size);
  }
}

int table_leave(void* token) {
  if (token == nullptr) return STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED;
  scope_ended_elsewhere = false;
  delete static_cast<scoped_current_stream*>(token); // never throws
  // Begun on another thread: left open there (src/scoped_current_stream.cpp).
  return std::exchange(scope_ended_elsewhere, false) ? STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED
                                                     : STREAMLIKE_CURRENT_STREAM_OK;
}

int table_register(const streamlike_current_stream_provider* provider, char* message, std::size_t size) {
  if (provider == nullptr) {
    write_message(message, size, "streamlike::register_current_stream_provider: no provider (NULL)");
    return STREAMLIKE_CURRENT_STREAM_REGISTRY_INVALID_ARGUMENT;
  }
  try {
    std::string refusal;
    switch (register_provider(*provider, refusal)) {
      case registration::registered: return STREAMLIKE_CURRENT_STREAM_OK;
      case registration::name_taken:
        write_message(message, size, refusal.c_str());
        return STREAMLIKE_CURRENT_STREAM_NAME_TAKEN;
      case registration::bad_provider: break;
    }
    write_message(message, size, refusal.c_str());
    return STREAMLIKE_CURRENT_STREAM_REGISTRY_INVALID_ARGUMENT;
  } catch (...) {
    return status_of_current_exception(message, size);
  }
}

int table_unregister(const char* name, char* message, std::size_t size) {
  if (name == nullptr) return STREAMLIKE_CURRENT_STREAM_NOT_FOUND;
  try {
    return unregister_current_stream_provider(name) ? STREAMLIKE_CURRENT_STREAM_OK
                                                    : STREAMLIKE_CURRENT_STREAM_NOT_FOUND;
  } catch (...) {
    return status_of_current_exception(message, size);
  }
}

int table_providers(void (*each)(void*, const char*, int32_t, int), void* context) {
  if (each == nullptr) return STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED;
  try {
    for (const current_stream_provider_info& p : current_stream_providers())
      each(context, p.name.c_str(), p.priority, p.can_set ? 1 : 0);
    return STREAMLIKE_CURRENT_STREAM_OK;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED;
  }
}

int table_conflicts(int32_t device, void (*each)(void*, const char*, void*), void* context) {
  if (each == nullptr || device < 0) return STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED;
  try {
    for (const current_stream_answer& a : current_stream_conflicts(device))
      each(context, a.provider.c_str(), a.stream.get());
    return STREAMLIKE_CURRENT_STREAM_OK;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_REGISTRY_FAILED;
  }
}

void table_check(int32_t device, void* given, const char* site) {
  detail::report_if_not_current(stream_view{static_cast<cudaStream_t>(given)}, device, site);
}

void table_forget_reported() { detail::forget_reported_sites(); }

void (*table_set_reporter(void (*reporter)(void)))(void) {
  // The reporter's type is the C++ API's (streamlike/current_stream_check.hpp), the same in every copy.
  const auto previous = set_current_stream_check_reporter(reinterpret_cast<current_stream_check_reporter>(reporter));
  return reinterpret_cast<void (*)(void)>(previous);
}

/// A nonce no other process's table (one left in memory by exec, or a stale variable) can match.
std::uint64_t random_nonce() noexcept {
  std::uint64_t nonce = 0;
  if (getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof nonce) && nonce != 0) return nonce;
  timespec now{};
  (void)clock_gettime(CLOCK_MONOTONIC, &now);
  nonce = static_cast<std::uint64_t>(now.tv_nsec) ^ (static_cast<std::uint64_t>(now.tv_sec) << 30) ^
          (static_cast<std::uint64_t>(getpid()) << 48) ^ reinterpret_cast<std::uintptr_t>(&now);
  return nonce != 0 ? nonce : 1;
}

streamlike_current_stream_registry make_table(const streamlike_current_stream_registry* self) noexcept {
  streamlike_current_stream_registry t{};
  t.self = self;
  t.magic = STREAMLIKE_CURRENT_STREAM_REGISTRY_MAGIC;
  t.nonce = random_nonce();
  t.struct_size = sizeof(streamlike_current_stream_registry);
  t.major_version = STREAMLIKE_CURRENT_STREAM_REGISTRY_MAJOR_VERSION;
  t.minor_version = STREAMLIKE_CURRENT_STREAM_REGISTRY_MINOR_VERSION;
  t.current = &table_current;
  t.answer = &table_answer;
  t.enter = &table_enter;
  t.leave = &table_leave;
  t.register_provider = &table_register;
  t.unregister_provider = &table_unregister;
  t.providers = &table_providers;
  t.conflicts = &table_conflicts;
  t.check = &table_check;
  t.forget_reported = &table_forget_reported;
  t.set_reporter = &table_set_reporter;
  return t;
}

// --- Finding a published table ----------------------------------------------------------------

/// The header every major shares: what a reader checks before it trusts anything else.
struct header {
  std::uint64_t magic;
  std::uint64_t nonce;
  const void* self;
  std::uint32_t struct_size;
  std::uint32_t major_version;
  std::uint32_t minor_version;
  std::uint32_t reserved;
};
static_assert(offsetof(streamlike_current_stream_registry, current) == sizeof(header));

/// Copies `n` bytes from `from` where they are readable; false (nothing read) where not: an
/// address read from the environment may be another program's (the variable outlives exec). The
/// kernel reads the memory for write(2), which fails with EFAULT instead of a fault.
bool copy_if_readable(const void* from, void* to, std::size_t n) noexcept {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  bool ok = write(fds[1], from, n) == static_cast<ssize_t>(n) && read(fds[0], to, n) == static_cast<ssize_t>(n);
  (void)close(fds[0]);
  (void)close(fds[1]);
  return ok;
}

/// The size of the fields of major 1, minor 0: a table shorter than this is refused.
constexpr std::size_t minor0_size = offsetof(streamlike_current_stream_registry, set_reporter) +
                                    sizeof(streamlike_current_stream_registry::set_reporter);

/// What the environment variable names: the table, when it is genuine and of this process;
/// `refused` says why a genuine table cannot be used (another major, too short).
const streamlike_current_stream_registry* published_table(std::string& refused) noexcept {
  const char* value = std::getenv(STREAMLIKE_CURRENT_STREAM_REGISTRY_VARIABLE);
  if (value == nullptr) return nullptr;
  char* end = nullptr;
  const long pid = std::strtol(value, &end, 10);
  if (end == value || *end != ':') return nullptr;
  const char* address_text = end + 1;
  const unsigned long long address = std::strtoull(address_text, &end, 16);
  if (end == address_text || *end != ':' || address == 0) return nullptr;
  const char* nonce_text = end + 1;
  const unsigned long long nonce = std::strtoull(nonce_text, &end, 16);
  if (end == nonce_text || *end != '\0') return nullptr;
  const auto* table = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(address));
  header h{};
  if (!copy_if_readable(table, &h, sizeof h)) return nullptr;
  if (h.magic != STREAMLIKE_CURRENT_STREAM_REGISTRY_MAGIC || h.nonce != nonce || h.self != table) return nullptr;
  const auto* found = static_cast<const streamlike_current_stream_registry*>(table);
  if (h.major_version != STREAMLIKE_CURRENT_STREAM_REGISTRY_MAJOR_VERSION) {
    refused = "its major version is " + std::to_string(h.major_version) + ", this copy reads major version " +
              std::to_string(STREAMLIKE_CURRENT_STREAM_REGISTRY_MAJOR_VERSION);
  } else if (h.struct_size < minor0_size) {
    refused = "its struct_size is " + std::to_string(h.struct_size) + ", shorter than the " +
              std::to_string(minor0_size) + " bytes of version " +
              std::to_string(STREAMLIKE_CURRENT_STREAM_REGISTRY_MAJOR_VERSION) + ".0";
  } else {
    return found;
  }
  std::fprintf(stderr,
               "streamlike: the current-stream registry published in this process (pid %ld, %s=%s) cannot be "
               "used: %s; this copy of streamlike keeps a registry of its own, which the others do not see\n",
               pid, STREAMLIKE_CURRENT_STREAM_REGISTRY_VARIABLE, value, refused.c_str());
  return nullptr;
}

/// Pins the object that holds this copy, so that the table it publishes is never unloaded.
void pin_this_copy() noexcept {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&make_table), &info) == 0 || info.dli_fname == nullptr) return;
  (void)dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE); // the main program: nothing to pin
}

void publish(const streamlike_current_stream_registry& table) noexcept {
  pin_this_copy();
  char value[96];
  std::snprintf(value, sizeof value, "%ld:%#" PRIxPTR ":%#" PRIx64, static_cast<long>(getpid()),
                reinterpret_cast<std::uintptr_t>(&table), table.nonce);
  (void)setenv(STREAMLIKE_CURRENT_STREAM_REGISTRY_VARIABLE, value, 1);
}

const streamlike_current_stream_registry* join() noexcept {
  try {
    std::string refused;
    if (const streamlike_current_stream_registry* found = published_table(refused)) return found;
    if (refused.empty()) publish(own_registry_table()); // none there: this copy's is the process's
  } catch (...) {
    // Out of memory at load: this copy keeps its own registry.
  }
  return nullptr;
}

// Decided when the copy is loaded, not at its first call: the loader serializes static
// initializers, so two copies cannot both find nothing and both publish.
[[maybe_unused]] const bool joined_when_loaded = forwarded() != nullptr;

/// `text` without the "streamlike: <operation>: " the forwarded exception's what() began with.
std::string_view reason_of(std::string_view text, const char* operation) {
  const std::string prefix = std::string("streamlike: ") + operation + ": ";
  if (text.substr(0, prefix.size()) == prefix) text.remove_prefix(prefix.size());
  return text;
}

} // namespace

const streamlike_current_stream_registry& own_registry_table() noexcept {
  static const streamlike_current_stream_registry table = make_table(&table);
  return table;
}

const streamlike_current_stream_registry* forwarded() noexcept {
  static const streamlike_current_stream_registry* const to = join();
  return to;
}

void throw_forwarded(int status, const char* operation, const registry_message& message) {
  const std::string_view text = message.text[0] != '\0' ? std::string_view(message.text) : "the registry failed";
  if (status == STREAMLIKE_CURRENT_STREAM_REGISTRY_INVALID_ARGUMENT) throw std::invalid_argument(std::string(text));
  throw error(cudaErrorUnknown, operation, reason_of(text, operation));
}

} // namespace streamlike::detail::current

extern "C" STREAMLIKE_API const streamlike_current_stream_registry* streamlike_current_stream_registry_table(void) {
  const streamlike_current_stream_registry* to = streamlike::detail::current::forwarded();
  return to != nullptr ? to : &streamlike::detail::current::own_registry_table();
}
