// Creating, inspecting and destroying the streams that shared_stream and unique_stream own: the
// one internal interface both use (src/stream_lifecycle.cpp).
#ifndef STREAMLIKE_SRC_STREAM_LIFECYCLE_HPP
#define STREAMLIKE_SRC_STREAM_LIFECYCLE_HPP

#include <streamlike/detail/stream_control_block.hpp>
#include <streamlike/stream_options.hpp>

#include <cuda.h> // types only
#include <cuda_runtime_api.h>

namespace streamlike::detail {

/// std::invalid_argument naming `who`, the priority and `device`'s range for a priority outside
/// it (the range asked with `device` current; remembered per device).
void check_priority(int priority, int device, const char* who);

/// std::invalid_argument for `who` (e.g. "unique_stream::adopt") given a default stream.
[[noreturn]] void throw_cannot_own_default(const char* who);

/// A stream create_stream made, and what making it fixed.
struct created_stream {
  cudaStream_t handle;
  int device;
  unsigned int flags;
  int priority; // as asked: create_stream refuses one outside the device's range, which CUDA would clamp
  /// Known when made through the driver in the current context (facts_of_created then asks
  /// nothing more of the context): its primary context's id, or 0 for another context.
  bool context_known = false;
  unsigned long long primary_context_id = 0;
  /// The primary context's handle when the stream was made in it (else null), which the drop
  /// asks for its id (destroy_if_primary_context_alive).
  CUcontext primary_context = nullptr;
};

/// A new stream as `options` say, on their device (the current one stays current): with the
/// driver's cuStreamCreateWithPriority in the thread's current context where the driver answers
/// (the runtime's call wraps the same), else with cudaStreamCreateWithPriority. Throws
/// streamlike::error naming `who` when CUDA fails, std::invalid_argument for a device or
/// priority the machine does not have.
[[nodiscard]] created_stream create_stream(const stream_options& options, const char* who);

/// The facts of a stream create_stream just made: its device, flags and priority as made, its id
/// asked of CUDA (a new stream is not capturing), its primary context as create_stream found it
/// (else asked: cuStreamGetCtx, cuCtxGetId). Throws streamlike::error if CUDA fails.
[[nodiscard]] stream_facts facts_of_created(const created_stream& created);

/// The facts of a live stream (device, id, flags, priority, primary context). Throws
/// streamlike::error if the handle does not name a live stream, and a capture::capturing_error
/// naming "<type>::<operation>" if it is capturing: its id and flags cannot be asked without
/// invalidating the capture.
[[nodiscard]] stream_facts query_facts(cudaStream_t handle, const char* type, const char* operation);

/// Destroys `handle` with the driver's cuStreamDestroy if the thread's current context is the
/// one with id `context_id` (not 0), which is then alive; true if it did (false too when the driver
/// refused the destroy: the stream is then still alive). The owners' drop tries
/// this before the device guard and the liveness check that the runtime's destroy needs. Never
/// throws.
bool destroy_if_context_current(cudaStream_t handle, unsigned long long context_id) noexcept;

/// Destroys `handle` with the driver's cuStreamDestroy if `primary` (the primary context the
/// stream was made in) still has the id `primary_id`, which proves that context alive; true if
/// it did, false if it did not try or the driver refused (the stream is then still alive). One driver call besides the destroy, whichever context is current. Never throws.
bool destroy_if_primary_context_alive(cudaStream_t handle, CUcontext primary, unsigned long long primary_id) noexcept;

/// Destroys a stream on `device` (a negative device: the current one). Never throws: errors,
/// including a runtime that is unloading, are ignored, since there is nothing left to release.
void destroy_stream_on_device(cudaStream_t handle, int device) noexcept;

/// The same, on the device the stream reports (for owners that did not record it): with the
/// driver's cuStreamDestroy where the stream's context is the current one, else through
/// destroy_stream_on_device.
void destroy_stream(cudaStream_t handle) noexcept;

} // namespace streamlike::detail

#endif // STREAMLIKE_SRC_STREAM_LIFECYCLE_HPP
