// streamlike/stream_encodings.hpp: integers that name streams, decoded by named functions.
//
// An integer is never a stream by itself: which stream `0`, `1` or `2` means depends on the
// convention it was written in. Each function below names its convention and refuses values that
// convention does not allow with std::invalid_argument, whose message names the convention, the
// value and what was expected.
//
// | convention                         | None / absent        | -1          | 0          | 1      | 2          | other      |
// |------------------------------------|----------------------|-------------|------------|--------|------------|------------|
// | from_cuda_stream_protocol (0, a)   | -                    | error       | legacy     | handle | handle     | handle     |
// | from_dlpack_stream                 | legacy               | no sync     | error      | legacy | per-thread | handle > 2 |
// | from_cuda_array_interface_stream   | no sync              | error       | error      | legacy | per-thread | handle     |
// | from_address (CUDA runtime)        | -                    | error       | caller's default | legacy | per-thread | handle |
//
// "no sync" is an empty optional: the producer asks for no synchronization, so there is no stream.
#ifndef STREAMLIKE_STREAM_ENCODINGS_HPP
#define STREAMLIKE_STREAM_ENCODINGS_HPP

#include <streamlike/default_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <concepts>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace streamlike {
namespace detail {

[[noreturn]] inline void throw_bad_stream_encoding(const char* convention, const std::string& value,
                                                   const char* expected) {
  throw std::invalid_argument(std::string("streamlike: ") + convention + ": invalid stream value " + value +
                              "; expected " + expected);
}

inline stream_view view_of_address(std::uint64_t address) noexcept {
  return stream_view{reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(address))};
}

} // namespace detail

/// The Python CUDA Stream Protocol: `obj.__cuda_stream__()` returns `(version, address)`.
/// Only version 0 exists. The address 0 is what CuPy's null stream and numba's default stream
/// export; both mean the legacy default stream, so (0, 0) decodes to stream_view::legacy_default()
/// and keeps that meaning whatever the importing translation unit's default-stream mode.
[[nodiscard]] inline stream_view from_cuda_stream_protocol(std::int64_t version, std::int64_t address) {
  if (version != 0) {
    detail::throw_bad_stream_encoding("__cuda_stream__",
                                      "(" + std::to_string(version) + ", " + std::to_string(address) + ")",
                                      "protocol version 0 (the only version defined), as (0, address)");
  }
  if (address < 0) {
    detail::throw_bad_stream_encoding("__cuda_stream__", "(0, " + std::to_string(address) + ")",
                                      "a non-negative stream address");
  }
  return address == 0 ? stream_view::legacy_default() : detail::view_of_address(static_cast<std::uint64_t>(address));
}

/// DLPack `__dlpack__(stream=...)` for CUDA devices: None is the legacy default stream, -1 asks
/// for no synchronization (empty result), 0 is disallowed as ambiguous, 1 is the legacy default
/// stream, 2 the per-thread default stream, and larger values are stream handles.
[[nodiscard]] inline std::optional<stream_view> from_dlpack_stream(std::optional<std::int64_t> stream) {
  constexpr const char* expected =
      "None or 1 (legacy default stream), 2 (per-thread default stream), -1 (no synchronization) "
      "or a stream handle > 2; 0 is disallowed as ambiguous";
  if (!stream) return stream_view::legacy_default();
  const std::int64_t value = *stream;
  if (value == -1) return std::nullopt;
  if (value == 0 || value < -1)
    detail::throw_bad_stream_encoding("DLPack __dlpack__(stream=)", std::to_string(value), expected);
  if (value == 1) return stream_view::legacy_default();
  if (value == 2) return stream_view::per_thread_default();
  return detail::view_of_address(static_cast<std::uint64_t>(value));
}

/// `__cuda_array_interface__` version 3, field "stream": None or absent asks for no
/// synchronization (empty result), 0 is disallowed, 1 is the legacy default stream, 2 the
/// per-thread default stream, other positive values are stream handles.
[[nodiscard]] inline std::optional<stream_view> from_cuda_array_interface_stream(std::optional<std::int64_t> stream) {
  if (!stream) return std::nullopt;
  const std::int64_t value = *stream;
  if (value <= 0) {
    detail::throw_bad_stream_encoding("__cuda_array_interface__ v3 \"stream\"", std::to_string(value),
                                      "None (no synchronization), 1 (legacy default stream), "
                                      "2 (per-thread default stream) or a stream handle; 0 is disallowed");
  }
  if (value == 1) return stream_view::legacy_default();
  if (value == 2) return stream_view::per_thread_default();
  return detail::view_of_address(static_cast<std::uint64_t>(value));
}

// from_address reads 0 as the CUDA runtime does in the caller's translation unit, so it lives in
// the per-mode inline namespace of default_stream.hpp (see there why).
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
inline namespace default_stream_per_thread {
#else
inline namespace default_stream_legacy {
#endif

/// A raw stream address, with the CUDA runtime's conventions: 1 is cudaStreamLegacy, 2 is
/// cudaStreamPerThread, and 0 is the default stream of the calling translation unit's mode,
/// returned as that explicit handle. Negative values are refused.
template <class Integer>
  requires(std::integral<Integer> && !std::same_as<Integer, bool>)
[[nodiscard]] stream_view from_address(Integer address) {
  if constexpr (std::signed_integral<Integer>) {
    if (address < 0) {
      detail::throw_bad_stream_encoding("from_address (CUDA runtime handle)", std::to_string(address),
                                        "a non-negative stream address (0: default stream, 1: legacy, "
                                        "2: per-thread, other: handle)");
    }
  }
  if (address == 0) return default_stream();
  return detail::view_of_address(static_cast<std::uint64_t>(address));
}

} // inline namespace default_stream_{legacy,per_thread}
} // namespace streamlike

#endif // STREAMLIKE_STREAM_ENCODINGS_HPP
