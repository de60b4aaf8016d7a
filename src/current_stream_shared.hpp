// One current-stream registry per process (docs/current-stream.md, "One registry per process"):
// whether this copy of streamlike forwards to a registry another copy published
// (src/current_stream_shared.cpp), and the calls that forward.
#ifndef STREAMLIKE_SRC_CURRENT_STREAM_SHARED_HPP
#define STREAMLIKE_SRC_CURRENT_STREAM_SHARED_HPP

#include <streamlike/c/current_stream_registry.h>

#include <cstddef>
#include <string>

namespace streamlike::detail::current {

/// The registry another copy published, which this copy forwards every registry call to; nullptr
/// where this copy's own registry serves (it published it, or the one it found was of another
/// major). Decided once, when the copy is loaded (or at its first registry call, if earlier).
[[nodiscard]] const streamlike_current_stream_registry* forwarded() noexcept;

/// This copy's own table, published or not.
[[nodiscard]] const streamlike_current_stream_registry& own_registry_table() noexcept;

/// Room for a message from another copy's table.
struct registry_message {
  char text[512] = {};
};

/// Throws what `status` of the forwarded `operation` means: std::invalid_argument or
/// streamlike::error with the message the registry wrote.
[[noreturn]] void throw_forwarded(int status, const char* operation, const registry_message& message);

} // namespace streamlike::detail::current

#endif // STREAMLIKE_SRC_CURRENT_STREAM_SHARED_HPP
