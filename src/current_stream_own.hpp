// streamlike's own current-stream provider: a thread-local stream per device, set only by scopes
// (scoped_current_stream, streamlike.use). current_stream() reads it inline (own_read); its
// table's functions live in src/current_stream_own.cpp.
#ifndef STREAMLIKE_SRC_CURRENT_STREAM_OWN_HPP
#define STREAMLIKE_SRC_CURRENT_STREAM_OWN_HPP

#include <streamlike/c/current_stream_provider.h>

#include <cstddef>
#include <cstdint>

namespace streamlike::detail::current {

// The first devices' streams in a plain array: trivial to construct and destroy, and initialized
// by a constant, so reading it is one thread-local access with no initialization check (in every
// file that reads it). Devices beyond it are kept in src/current_stream_own.cpp.
inline constexpr std::size_t own_inline_devices = 32;
inline thread_local void* own_inline[own_inline_devices] = {};

/// A device at or beyond own_inline_devices: its slot, or nullptr where none was set.
[[gnu::noinline]] void* own_more_get(std::size_t device) noexcept;

/// The stream a scope set for `device` on the calling thread, or nullptr where none is set.
inline void* own_read(std::int32_t device) noexcept {
  const auto d = static_cast<std::size_t>(device);
  return d < own_inline_devices ? own_inline[d] : own_more_get(d);
}

/// The name the provider registers under (it cannot be unregistered).
inline constexpr const char* own_name = "streamlike";

/// The provider's table: priority STREAMLIKE_CURRENT_STREAM_PRIORITY_STREAMLIKE, get, set, and
/// enter/leave by token.
[[nodiscard]] streamlike_current_stream_provider own_provider() noexcept;

} // namespace streamlike::detail::current

#endif // STREAMLIKE_SRC_CURRENT_STREAM_OWN_HPP
