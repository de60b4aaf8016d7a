// current_stream() and current_stream_conflicts: the rule that picks one provider's answer, inside
// and outside scopes (docs/current-stream.md). The providers come from the registry
// (src/current_stream_registry.cpp); streamlike's own is read inline (src/current_stream_own.hpp);
// the scopes are src/scoped_current_stream.cpp, the device checks src/current_stream_devices.cpp.
#include "current_stream_discovery.hpp"
#include "current_stream_own.hpp"
#include "current_stream_registry.hpp"
#include "current_stream_scope.hpp"
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
#include <new>
#include <optional>
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
} // namespace

namespace {

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
  const thread_streams& mine = this_thread; // the one thread-local access
  if (const saved_streams* scope = mine.innermost_scope) [[unlikely]] {
    // The innermost scope on this device over a list of streamlike's own provider alone: no
    // framework's block can have been opened inside it, so its stream answers (scoped_answer's rule,
    // without the walk).
    if (scope->device == device && scope->list->shape == list_shape::own_only) return scope->stream;
    return answer_with_scopes(list, mine, device);
  }
  if (list.shape == list_shape::any || static_cast<std::size_t>(device) >= own_inline_devices) [[unlikely]]
    return first_answer_of(list, device);
  void* const own = mine.own[device]; // nullptr: unset, no answer
  if (list.shape == list_shape::own_only) return own;
  void* torch = nullptr;
  if (list.torch(device, &torch) != 0) return own; // torch gave no answer
  const auto is_default = [](void* s) { return stream_view{static_cast<cudaStream_t>(s)}.is_default(); };
  return !is_default(torch) || own == nullptr || is_default(own) ? torch : own;
}

/// current_stream() of a copy that forwards (it opens no scope and keeps no stream of its own), where
/// the registry refused: this copy's own check says why (the device), else the registry failed.
[[gnu::noinline]] stream_view forwarded_refusal(const provider_list& list, int device) {
  void* stream = nullptr;
  device = resolve_device(device, "current_stream");
  if (list.forward(device, &stream) == STREAMLIKE_CURRENT_STREAM_OK)
    return stream_view{static_cast<cudaStream_t>(stream)};
  throw error(cudaErrorUnknown, "current_stream", "the process's current-stream registry failed");
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

/// current_on's body, inlined into current_stream(device, std::nothrow) too.
[[gnu::always_inline]] inline bool answer_on(int device, void*& stream) noexcept {
  const provider_list& list = listed(/*throttled=*/true);
  if (list.shape == list_shape::forwarded) [[unlikely]]
    return list.forward(device, &stream) == STREAMLIKE_CURRENT_STREAM_OK;
  stream = current_handle(list, device);
  return true;
}

} // namespace

bool current_on(int device, void*& stream) noexcept { return answer_on(device, stream); }

answer current_answer(const provider_list& list, int device) noexcept {
  std::ptrdiff_t by = -1;
  if (const saved_streams* scope = scope_on(this_thread, device)) {
    void* const stream = scoped_answer(*scope, device, by);
    return by < 0 ? answer{stream, nullptr} : answer{stream, &scope->list->entries[static_cast<std::size_t>(by)]};
  }
  void* const stream = first_answer(list, device, by);
  return by < 0 ? answer{} : answer{stream, &list.entries[static_cast<std::size_t>(by)]};
}

} // namespace detail::current

namespace current = detail::current;

stream_view current_stream(int device) {
  const current::provider_list& list = current::listed(/*throttled=*/true);
  if (list.shape == current::list_shape::forwarded) [[unlikely]] {
    // The registry answers, current_device included, so that the registry's copy reads the current
    // device only where it must.
    void* stream = nullptr;
    if (device >= current_device && list.forward(device, &stream) == STREAMLIKE_CURRENT_STREAM_OK) [[likely]]
      return stream_view{static_cast<cudaStream_t>(stream)};
    return current::forwarded_refusal(list, device);
  }
  if (device == current_device && current::nothing_named(list)) return stream_view{cudaStream_t{}};
  device = current::resolve_device(device, "current_stream");
  return stream_view{static_cast<cudaStream_t>(current::current_handle(list, device))};
}

std::optional<stream_view> current_stream(int device, std::nothrow_t) noexcept {
  void* stream = nullptr;
  if (device < 0 || !current::answer_on(device, stream)) [[unlikely]]
    return std::nullopt;
  return stream_view{static_cast<cudaStream_t>(stream)};
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
