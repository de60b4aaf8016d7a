// streamlike's own current-stream provider: a thread-local stream per device, set only by scopes
// (scoped_current_stream, streamlike.use). current_stream() reads it inline (own_read); its
// table's functions live in src/current_stream_own.cpp.
#ifndef STREAMLIKE_SRC_CURRENT_STREAM_OWN_HPP
#define STREAMLIKE_SRC_CURRENT_STREAM_OWN_HPP

#include <streamlike/c/current_stream_provider.h>

#include <cstddef>
#include <cstdint>

namespace streamlike::detail::current {

inline constexpr std::size_t own_inline_devices = 32;

/// What a scope saved (src/current_stream.cpp).
struct saved_streams;

/// The calling thread's state, in one object so that current_stream() reaches all of it with one
/// thread-local access: the first devices' own streams (devices beyond them are kept in
/// src/current_stream_own.cpp) and the chain of open scopes. Trivial to destroy and initialized by
/// a constant, so no access runs an initialization check (in every file that reads it).
struct thread_streams {
  void* own[own_inline_devices] = {};
  saved_streams* innermost_scope = nullptr; // the innermost open scope; each links the one before
  std::size_t named = 0;                    // slots of any device holding a stream
};
inline thread_local constinit thread_streams this_thread{};

/// A device at or beyond own_inline_devices: its slot, or nullptr where none was set.
[[gnu::noinline]] void* own_more_get(std::size_t device) noexcept;

/// The stream a scope set for `device` in `mine` (the calling thread's), or nullptr where none is set.
inline void* own_read(const thread_streams& mine, std::int32_t device) noexcept {
  const auto d = static_cast<std::size_t>(device);
  return d < own_inline_devices ? mine.own[d] : own_more_get(d);
}
inline void* own_read(std::int32_t device) noexcept { return own_read(this_thread, device); }

/// The name the provider registers under (it cannot be unregistered).
inline constexpr const char* own_name = "streamlike";
/// The name of the one entry of a copy that forwards to another copy's registry (never listed:
/// listings forward too).
inline constexpr const char* forwarded_name = "streamlike-registry";

/// The provider's table: priority STREAMLIKE_CURRENT_STREAM_PRIORITY_STREAMLIKE, get, set, and
/// enter/leave by token.
[[nodiscard]] streamlike_current_stream_provider own_provider() noexcept;

} // namespace streamlike::detail::current

#endif // STREAMLIKE_SRC_CURRENT_STREAM_OWN_HPP
