// streamlike/stream_options.hpp: how to create a stream.
#ifndef STREAMLIKE_STREAM_OPTIONS_HPP
#define STREAMLIKE_STREAM_OPTIONS_HPP

#include <streamlike/partition.hpp>

#include <optional>

namespace streamlike {

/// Options for shared_stream::create, unique_stream::create and stream_pool, meant for
/// designated initializers: `shared_stream::create({.device = 1, .priority = -1})`.
struct stream_options {
  /// The device to create the stream on; empty: the calling thread's current device. The
  /// stream is created there even when another device is current, which stays current.
  std::optional<int> device{};
  /// A priority within the device's range (cudaDeviceGetStreamPriorityRange: lower numbers are
  /// higher priorities, 0 is the default); a value outside it is refused, never clamped.
  int priority = 0;
  /// cudaStreamNonBlocking: the stream does not synchronize with the legacy default stream.
  /// True by default, as in cuda::stream and RMM's cuda_stream.
  bool non_blocking = true;
  /// The SM partition (green context) to create the stream in; empty: the device's current
  /// context. The stream holds a copy, so the green context outlives it. A stream on a partition
  /// is non-blocking (cuGreenCtxStreamCreate makes no other) and on the partition's device:
  /// another device or non_blocking = false is refused with std::invalid_argument.
  std::optional<streamlike::partition> partition{};
};

} // namespace streamlike

#endif // STREAMLIKE_STREAM_OPTIONS_HPP
