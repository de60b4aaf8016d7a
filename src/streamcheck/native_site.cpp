#include "native_site.hpp"

#include <pthread.h>
#include <unwind.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>

namespace streamlike::check {
namespace {

// Where a native site's return addresses lie in the stack, as bytes above the frame of the
// function that takes the site: the same call chain puts them at the same places, whatever the
// thread or the depth of the stack.
struct stack_layout {
  int depth = 0;
  std::ptrdiff_t extent = 0; // bytes above the frame that reading the layout needs
  std::array<std::ptrdiff_t, max_native_addresses> where{};
  std::array<void*, max_native_addresses> address{};
};

// Published once filled, never changed nor freed (callbacks may come during static destruction).
constexpr int max_layouts = 1024;
std::array<std::atomic<const stack_layout*>, max_layouts> layouts{};
std::atomic<int> layout_count{0};
std::mutex adding_layout;
thread_local int last_matched = -1; // a loop repeats one site

// The end of the calling thread's stack (its highest address); null where it cannot be known, and
// then every site of the thread is unwound.
const char* this_thread_stack_end() {
  static thread_local const char* const end = [] {
    const char* found = nullptr;
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
      void* low = nullptr;
      std::size_t size = 0;
      if (pthread_attr_getstack(&attributes, &low, &size) == 0) found = static_cast<const char*>(low) + size;
      pthread_attr_destroy(&attributes);
    }
    return found;
  }();
  return end;
}

// A word of this thread's stack, in another frame than the reader's, as an unwinder reads it.
[[gnu::no_sanitize_address]] void* word_at(const char* at) {
  void* word = nullptr;
  std::memcpy(&word, at, sizeof word);
  return word;
}

// The layout's words are in this stack, frame up.
[[gnu::no_sanitize_address]] bool holds(const stack_layout& layout, const char* frame, const char* stack_end) {
  if (stack_end == nullptr || frame >= stack_end || stack_end - frame < layout.extent) return false;
  for (int i = 0; i < layout.depth; ++i)
    if (word_at(frame + layout.where[i]) != layout.address[i]) return false;
  return true;
}

const stack_layout* matching_layout(const char* frame) {
  const char* const stack_end = this_thread_stack_end();
  const int count = layout_count.load(std::memory_order_acquire);
  if (last_matched >= 0 && last_matched < count) {
    const stack_layout* layout = layouts[last_matched].load(std::memory_order_relaxed);
    if (holds(*layout, frame, stack_end)) return layout;
  }
  for (int i = count - 1; i >= 0; --i) {
    const stack_layout* layout = layouts[i].load(std::memory_order_relaxed);
    if (i != last_matched && holds(*layout, frame, stack_end)) {
      last_matched = i;
      return layout;
    }
  }
  return nullptr;
}

void remember(const stack_layout& layout) {
  const std::lock_guard lock(adding_layout);
  const int count = layout_count.load(std::memory_order_relaxed);
  if (count == max_layouts) return; // full: later sites are unwound every time
  for (int i = 0; i < count; ++i) {
    const stack_layout& known = *layouts[i].load(std::memory_order_relaxed);
    if (known.depth == layout.depth && known.where == layout.where && known.address == layout.address) return;
  }
  layouts[count].store(new stack_layout(layout), std::memory_order_relaxed);
  layout_count.store(count + 1, std::memory_order_release);
}

// What the unwinder saw of each frame: its instruction, and its stack pointer (libgcc's
// _Unwind_GetCFA in a backtrace: the canonical frame address of the frame it returns to).
struct unwound {
  std::array<void*, max_native_addresses + 1> ip{};
  std::array<const char*, max_native_addresses + 1> sp{};
  int count = 0;
};

_Unwind_Reason_Code note_frame(_Unwind_Context* context, void* state) {
  auto& u = *static_cast<unwound*>(state);
  const auto ip = _Unwind_GetIP(context);
  if (ip == 0 || u.count == static_cast<int>(u.ip.size())) return _URC_END_OF_STACK;
  u.ip[u.count] = reinterpret_cast<void*>(ip);
  u.sp[u.count] = reinterpret_cast<const char*>(_Unwind_GetCFA(context));
  ++u.count;
  return _URC_NO_REASON;
}

// The word holding `address` in the frame [low, high), searched from the top: where x86-64 keeps
// a return address (just below the frame it returns to) and where AArch64's frame records are
// when the frame has none of its own locals above them. Null when it is not there (a return
// address signed by pointer authentication).
const char* slot_of(void* address, const char* low, const char* high) {
  constexpr std::ptrdiff_t searched_words = 512;
  if (low == nullptr || high == nullptr || high <= low) return nullptr;
  for (const char* at = high - sizeof(void*); at >= low && (high - at) / 8 <= searched_words; at -= sizeof(void*))
    if (word_at(at) == address) return at;
  return nullptr;
}

// Unwinds the caller of `frame`'s function (inlined into it, so that the unwinder's first frame is
// that function's): the return addresses up to the first whose place in the stack cannot be
// found, the same list whether or not the layout is kept, so that a site is one key either way.
[[gnu::always_inline]] inline void unwind(const char* frame, call_site& site, stack_layout* layout) {
  unwound u;
  _Unwind_Backtrace(note_frame, &u);
  stack_layout found;
  int depth = 0;
  for (int i = 1; i < u.count; ++i, ++depth) { // u.ip[0] is in the function itself
    // The function's own return address is in its frame record, at the frame address on both
    // x86-64 and AArch64 (their locals, copies of addresses among them, are not searched).
    const char* slot = i == 1 ? (word_at(frame + sizeof(void*)) == u.ip[1] ? frame + sizeof(void*) : nullptr)
                              : slot_of(u.ip[i], u.sp[i - 1], u.sp[i]);
    if (slot == nullptr) break;
    found.where[depth] = slot - frame;
    found.address[depth] = u.ip[i];
    found.extent = std::max<std::ptrdiff_t>(found.extent, slot - frame + static_cast<std::ptrdiff_t>(sizeof(void*)));
  }
  found.depth = depth;
  site.addresses.assign(found.address.begin(), found.address.begin() + depth);
  if (layout != nullptr) *layout = found;
}

} // namespace

[[gnu::noinline]] void take_native_site(void*, call_site& site) {
  const char* const frame = static_cast<const char*>(__builtin_frame_address(0));
  if (const stack_layout* known = matching_layout(frame)) {
    site.addresses.assign(known->address.begin(), known->address.begin() + known->depth);
    return;
  }
  stack_layout layout;
  unwind(frame, site, &layout);
  if (layout.depth > 0) remember(layout);
}

[[gnu::noinline]] void unwind_native_site(void*, call_site& site) {
  unwind(static_cast<const char*>(__builtin_frame_address(0)), site, nullptr);
}

} // namespace streamlike::check
