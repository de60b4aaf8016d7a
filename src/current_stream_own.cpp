// streamlike's own current-stream provider (src/current_stream_own.hpp): get, set, and enter and
// leave by token, over the calling thread's slot per device.
#include "current_stream_own.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace streamlike::detail::current {
namespace {

thread_local std::vector<void*> own_more; // devices own_inline_devices and up; grows on set

// A slot no scope set answers nothing: streamlike itself names no stream there, and a "default
// stream" answer would show as a disagreement beside a framework's own block
// (current_stream_conflicts, the check).
int own_get(void*, int32_t device, void** stream) {
  void* const set = own_read(device);
  if (set == nullptr) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
  *stream = set;
  return STREAMLIKE_CURRENT_STREAM_OK;
}

// Stores `stream` in `slot`, counting the slots that hold one (what current_stream()'s shortcut reads).
void store(void*& slot, void* stream) noexcept {
  thread_streams& mine = this_thread;
  mine.named += static_cast<std::size_t>(stream != nullptr) - static_cast<std::size_t>(slot != nullptr);
  slot = stream;
}

int own_set(void*, int32_t device, void* stream) {
  const auto d = static_cast<std::size_t>(device);
  if (d < own_inline_devices) {
    store(this_thread.own[d], stream);
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
  try {
    const std::size_t i = d - own_inline_devices;
    if (i >= own_more.size()) {
      if (stream == nullptr) return STREAMLIKE_CURRENT_STREAM_OK; // unset already reads as 0
      own_more.resize(i + 1, nullptr);
    }
    store(own_more[i], stream);
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

} // namespace

void* own_more_get(std::size_t device) noexcept {
  const std::size_t i = device - own_inline_devices;
  return i < own_more.size() ? own_more[i] : nullptr;
}

streamlike_current_stream_provider own_provider() noexcept {
  streamlike_current_stream_provider own = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
  own.priority = STREAMLIKE_CURRENT_STREAM_PRIORITY_STREAMLIKE;
  own.name = own_name;
  own.get = &own_get;
  own.set = &own_set;
  own.enter = &own_enter;
  own.leave = &own_leave;
  return own;
}

} // namespace streamlike::detail::current
