// Creating, inspecting and destroying the streams that shared_stream and unique_stream own: the
// one internal interface both use (src/stream_lifecycle.cpp).
#ifndef STREAMLIKE_SRC_STREAM_LIFECYCLE_HPP
#define STREAMLIKE_SRC_STREAM_LIFECYCLE_HPP

#include <streamlike/detail/stream_control_block.hpp>
#include <streamlike/stream_options.hpp>

#include <cuda_runtime_api.h>

namespace streamlike::detail {

/// std::invalid_argument for `who` (e.g. "unique_stream::adopt") given a default stream.
[[noreturn]] void throw_cannot_own_default(const char* who);

/// A stream create_stream made, and what making it fixed.
struct created_stream {
  cudaStream_t handle;
  int device;
  unsigned int flags;
  int priority; // as asked: create_stream refuses one outside the device's range, which CUDA would clamp
};

/// A new stream as `options` say, on their device (the current one stays current). Throws
/// streamlike::error naming `who` when CUDA fails, std::invalid_argument for a device or
/// priority the machine does not have.
[[nodiscard]] created_stream create_stream(const stream_options& options, const char* who);

/// The facts of a stream create_stream just made: its device, flags and priority as made, its id
/// and primary context asked of CUDA (two calls instead of query_facts' five; a new stream is not
/// capturing). Throws streamlike::error if CUDA fails.
[[nodiscard]] stream_facts facts_of_created(const created_stream& created);

/// The facts of a live stream (device, id, flags, priority, primary context). Throws
/// streamlike::error if the handle does not name a live stream, and a capture::capturing_error
/// naming "<type>::<operation>" if it is capturing: its id and flags cannot be asked without
/// invalidating the capture.
[[nodiscard]] stream_facts query_facts(cudaStream_t handle, const char* type, const char* operation);

/// Destroys a stream on `device` (a negative device: the current one). Never throws: errors,
/// including a runtime that is unloading, are ignored, since there is nothing left to release.
void destroy_stream_on_device(cudaStream_t handle, int device) noexcept;

/// The same, on the device the stream reports (for owners that did not record it).
void destroy_stream(cudaStream_t handle) noexcept;

} // namespace streamlike::detail

#endif // STREAMLIKE_SRC_STREAM_LIFECYCLE_HPP
