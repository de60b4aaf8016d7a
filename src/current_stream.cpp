// current_stream(), scoped_current_stream and current_stream_conflicts: the rule that picks one
// provider's answer, inside and outside scopes (docs/current-stream.md). The providers come from
// the registry (src/current_stream_registry.cpp); streamlike's own is read inline
// (src/current_stream_own.hpp).
#include "current_stream_discovery.hpp"
#include "current_stream_own.hpp"
#include "current_stream_registry.hpp"
#include "current_stream_shared.hpp"
#include "stream_lifecycle.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_check.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <limits>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace streamlike {

namespace detail::current {

namespace {

/// providers(), inlined into current_stream(): once every built-in framework is found (the list
/// says so), or while the loader loaded nothing since the last look (whatever was found then),
/// the list is all there is to read; else the registry looks (src/current_stream_registry.cpp).
inline const provider_list& listed(bool throttled) noexcept {
  const provider_list* list = published.load(std::memory_order_acquire);
  if (list != nullptr && (list->complete || loader_quiet())) [[likely]]
    return *list;
  return providers(throttled);
}

} // namespace

namespace {

/// One provider's answer; false where it gave none (failed, or unavailable on this thread).
inline bool ask(const getter& g, int device, void*& stream) noexcept {
  switch (g.kind) {
    case direct_kind::own: stream = own_read(device); return stream != nullptr; // unset: no answer
    case direct_kind::torch: return g.torch(device, &stream) == 0;
    case direct_kind::tvm_ffi: stream = g.tvm_ffi(2 /* kDLCUDA */, device); return true;
    case direct_kind::table:
    case direct_kind::forwarded: break; // through the table's get
  }
  return g.get(g.context, device, &stream) == STREAMLIKE_CURRENT_STREAM_OK;
}

/// What a scope expects a provider to answer while nothing inside it changed that provider:
/// the scope's stream where the scope set it, the provider's answer when the scope began where it
/// could not (read-only), nothing where the provider gave no answer then (unavailable on the
/// thread, failed) or is streamlike's own slot.
struct expectation {
  void* stream = nullptr;
  bool known = false;
};

/// What a scope did to one provider of its list: what it expects of it, and, where it set it, the
/// provider's previous stream (get + set) or the token its enter gave.
struct scope_entry {
  expectation expected;
  void* previous_or_token = nullptr;
  bool set = false;   // restored when the scope ends
  bool token = false; // previous_or_token is enter's token
};

} // namespace

/// What scoped_current_stream saved: the list it set, one entry per provider of it, and the stream
/// it set, for the rule inside it. Linked into the entering thread's chain of open scopes. The
/// entries of the first few providers live inside it, so a scope allocates this object alone.
struct saved_streams {
  explicit saved_streams(const provider_list& of) : list(&of) {
    const std::size_t n = of.entries.size();
    if (n > inline_entries.size()) more_entries.resize(n);
    entries = n > inline_entries.size() ? std::span<scope_entry>(more_entries) : std::span(inline_entries).first(n);
  }
  saved_streams(const saved_streams&) = delete;
  saved_streams& operator=(const saved_streams&) = delete;

  const provider_list* list;
  std::span<scope_entry> entries; // one per entry of `list`, in its order
  void* stream = nullptr;         // the scope's stream
  int device = -1;
  std::ptrdiff_t own = -1;        // streamlike's own provider in `list`
  saved_streams* outer = nullptr; // the scope opened before it on this thread

private:
  std::array<scope_entry, 6> inline_entries{};
  std::vector<scope_entry> more_entries; // where the list is longer
};

namespace {

/// The innermost open scope on `device` in `mine` (the calling thread's state), or nullptr.
inline const saved_streams* scope_on(const thread_streams& mine, int device) noexcept {
  for (const saved_streams* s = mine.innermost_scope; s != nullptr; s = s->outer)
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
    const expectation& e = scope.entries[i].expected;
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

/// first_answer without the provider, out of current_stream()'s straight path.
[[gnu::noinline]] void* first_answer_of(const provider_list& list, int device) noexcept {
  std::ptrdiff_t unused = -1;
  return first_answer(list, device, unused);
}

/// The answer inside a scope, or the rule's where no scope is open on `device`.
[[gnu::noinline]] void* answer_with_scopes(const provider_list& list, const thread_streams& mine, int device) noexcept {
  std::ptrdiff_t unused = -1;
  if (const saved_streams* scope = scope_on(mine, device)) return scoped_answer(*scope, device, unused);
  return first_answer_of(list, device);
}

/// What current_stream() answers. The lists of the common processes (nothing loaded, torch alone)
/// are read without the walk, streamlike's own slot before torch's getter so that nothing of the
/// thread's state need be kept across that call: first_answer's rule, for those two lists.
inline void* current_handle(const provider_list& list, int device) noexcept {
  // A copy that forwards opens no scope and keeps no stream of its own: the registry answers, and
  // this copy's thread-local state is not read.
  if (list.shape == list_shape::forwarded) [[unlikely]] {
    void* stream = nullptr;
    return list.forward(device, &stream) == STREAMLIKE_CURRENT_STREAM_OK ? stream : nullptr;
  }
  const thread_streams& mine = this_thread; // the one thread-local access
  if (mine.innermost_scope != nullptr) [[unlikely]]
    return answer_with_scopes(list, mine, device);
  if (list.shape == list_shape::any || static_cast<std::size_t>(device) >= own_inline_devices) [[unlikely]]
    return first_answer_of(list, device);
  void* const own = mine.own[device]; // nullptr: unset, no answer
  if (list.shape == list_shape::own_only) return own;
  void* torch = nullptr;
  if (list.torch(device, &torch) != 0) return own; // torch gave no answer
  const auto is_default = [](void* s) { return stream_view{static_cast<cudaStream_t>(s)}.is_default(); };
  return !is_default(torch) || own == nullptr || is_default(own) ? torch : own;
}

/// True where no provider but streamlike's own is registered, no scope is open on this thread and
/// none of its own slots holds a stream: the answer is the handle 0 whatever the current device,
/// which then need not be read. Only once it was read (a driver answers), so that a process
/// without one still hears so.
inline bool nothing_named(const provider_list& list) noexcept {
  if (list.shape != list_shape::own_only || !current_device_read.load(std::memory_order_relaxed)) return false;
  const thread_streams& mine = this_thread;
  return mine.innermost_scope == nullptr && mine.named == 0;
}

} // namespace

answer current_answer(const provider_list& list, int device) noexcept {
  std::ptrdiff_t by = -1;
  if (const saved_streams* scope = scope_on(this_thread, device)) {
    void* const stream = scoped_answer(*scope, device, by);
    return by < 0 ? answer{stream, nullptr} : answer{stream, &scope->list->entries[static_cast<std::size_t>(by)]};
  }
  void* const stream = first_answer(list, device, by);
  return by < 0 ? answer{} : answer{stream, &list.entries[static_cast<std::size_t>(by)]};
}

std::atomic<int> devices_known{0};
std::atomic<bool> current_device_read{false};

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

/// Restores `saved` in reverse order, through the very providers it set (the list it read is never
/// freed, and a provider's functions outlive its registration): one unregistered meanwhile is still
/// left, one registered again under the same name meanwhile is not handed the other's token.
/// Never throws.
void restore(const saved_streams& saved, int device) noexcept {
  for (std::size_t i = saved.entries.size(); i-- > 0;) {
    const scope_entry& e = saved.entries[i];
    if (!e.set) continue;
    const provider& p = saved.list->entries[i];
    if (e.token) {
      (void)p.table.leave(p.table.context, device, e.previous_or_token);
    } else {
      (void)p.table.set(p.table.context, device, e.previous_or_token);
    }
  }
}

} // namespace

} // namespace detail::current

namespace current = detail::current;

stream_view current_stream(int device) {
  const current::provider_list& list = current::listed(/*throttled=*/true);
  if (device == current_device && current::nothing_named(list)) return stream_view{cudaStream_t{}};
  device = current::resolve_device(device, "current_stream");
  return stream_view{static_cast<cudaStream_t>(current::current_handle(list, device))};
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
  if (const streamlike_current_stream_registry* to = current::forwarded()) {
    // The process's registry is another copy's: the scope is opened there, where every copy reads.
    current::registry_message message;
    const int status = to->enter(device_, stream.get(), &saved_, message.text, sizeof message.text);
    if (status != STREAMLIKE_CURRENT_STREAM_OK) current::throw_forwarded(status, "scoped_current_stream", message);
    return;
  }
  const current::provider_list& list = current::providers();
  auto saved = std::make_unique<current::saved_streams>(list);
  saved->stream = stream.get();
  saved->device = device_;
  for (std::size_t i = 0; i < list.entries.size(); ++i) {
    const current::provider& p = list.entries[i];
    current::scope_entry& entry = saved->entries[i];
    const bool by_token = p.table.enter != nullptr;
    if (p.direct.kind == current::direct_kind::own) saved->own = static_cast<std::ptrdiff_t>(i);
    if (!by_token && p.table.set == nullptr) {
      // Read-only: what it answers now is what it answers while nothing inside changes it.
      entry.expected.known =
          p.table.get(p.table.context, device_, &entry.expected.stream) == STREAMLIKE_CURRENT_STREAM_OK;
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
    entry.previous_or_token = previous;
    entry.set = true;
    entry.token = by_token;
    // streamlike's own slot only ever holds what scopes set: nothing to tell apart there.
    if (p.direct.kind != current::direct_kind::own) entry.expected = current::expectation{stream.get(), true};
  }
  saved->outer = current::this_thread.innermost_scope;
  current::this_thread.innermost_scope = saved.get();
  saved_ = saved.release();
}

scoped_current_stream::~scoped_current_stream() {
  if (const streamlike_current_stream_registry* to = current::forwarded()) {
    (void)to->leave(saved_);
    return;
  }
  auto* saved = static_cast<current::saved_streams*>(saved_);
  // Out of the thread's chain, wherever it is in it (a Python block may end out of order).
  for (current::saved_streams** link = &current::this_thread.innermost_scope; *link != nullptr;
       link = &(*link)->outer) {
    if (*link == saved) {
      *link = saved->outer;
      break;
    }
  }
  current::restore(*saved, device_);
  delete saved;
}

std::vector<current_stream_answer> current_stream_conflicts(int device) {
  device = current::resolve_device(device, "current_stream_conflicts");
  if (const streamlike_current_stream_registry* to = current::forwarded()) {
    std::vector<current_stream_answer> answers;
    const auto each = [](void* context, const char* name, void* stream) {
      static_cast<std::vector<current_stream_answer>*>(context)->push_back(
          current_stream_answer{name, stream_view{static_cast<cudaStream_t>(stream)}});
    };
    if (to->conflicts(device, each, &answers) != STREAMLIKE_CURRENT_STREAM_OK)
      throw error(cudaErrorUnknown, "current_stream_conflicts", "the process's current-stream registry failed");
    return answers;
  }
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

} // namespace streamlike
