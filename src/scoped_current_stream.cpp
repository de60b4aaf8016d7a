// scoped_current_stream: a stream made current in every provider that can set it, each put back
// when the scope ends (docs/current-stream.md). What a scope keeps is in src/current_stream_scope.hpp.
#include "current_stream_registry.hpp"
#include "current_stream_scope.hpp"
#include "current_stream_shared.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/error.hpp>

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

namespace streamlike {

namespace detail::current {

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

/// Scopes ended on another thread than the one that began it: never freed, and reachable from here
/// (for LeakSanitizer too).
std::atomic<saved_streams*> abandoned_scopes{nullptr};

} // namespace

void abandon(saved_streams* saved) noexcept {
  // Restoring here would set this thread's providers to what the other thread had, and freeing
  // the scope would leave that thread's chain pointing at freed memory: it stays open there,
  // keeping its streams current on that thread, and is kept.
  saved->next_abandoned = abandoned_scopes.load(std::memory_order_relaxed);
  while (!abandoned_scopes.compare_exchange_weak(saved->next_abandoned, saved, std::memory_order_release,
                                                 std::memory_order_relaxed)) {
  }
  scope_ended_elsewhere = true;
  std::fprintf(stderr,
               "streamlike: a current-stream scope (scoped_current_stream, streamlike_current_stream_set) was ended "
               "on another thread than the one that began it; it was not restored there and stays open on the "
               "thread that began it (its stream current there), and its memory is kept; expected: end a scope on "
               "the thread that began it\n");
}

} // namespace detail::current

namespace current = detail::current;

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
    if (to->leave(saved_) != STREAMLIKE_CURRENT_STREAM_OK) current::scope_ended_elsewhere = true;
    return;
  }
  auto* saved = static_cast<current::saved_streams*>(saved_);
  // Out of the thread's chain, wherever it is in it (a Python block may end out of order). A scope
  // is in the chain of the thread that began it until it ends, so not finding it there means it is
  // ended on another thread.
  for (current::saved_streams** link = &current::this_thread.innermost_scope; *link != nullptr;
       link = &(*link)->outer) {
    if (*link == saved) {
      *link = saved->outer;
      current::restore(*saved, device_);
      delete saved;
      return;
    }
  }
  current::abandon(saved);
}

} // namespace streamlike
