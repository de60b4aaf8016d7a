// streamlike/capture_state.hpp: what a stream is doing with CUDA graph capture, as
// stream_view::capture_info() and the owners' capture_info() report it.
//
// A stream in capture records work into a graph instead of running it. Some CUDA calls on such a
// stream (cudaStreamQuery, cudaStreamSynchronize, cudaStreamGetId/GetFlags/GetDevice) invalidate
// the capture; streamlike never makes them there: it answers another way or refuses by name
// (docs/cuda-graphs.md).
#ifndef STREAMLIKE_CAPTURE_STATE_HPP
#define STREAMLIKE_CAPTURE_STATE_HPP

#include <cuda_runtime_api.h>

namespace streamlike {

/// cudaStreamCaptureStatus, by name.
enum class capture_status {
  /// Not capturing: work runs.
  none = cudaStreamCaptureStatusNone,
  /// Capturing: work is recorded into `capture_state::graph`.
  active = cudaStreamCaptureStatusActive,
  /// Part of a capture that an illegal call invalidated: the capture must still be ended, and
  /// yields no graph.
  invalidated = cudaStreamCaptureStatusInvalidated,
};

/// A stream's capture state (cudaStreamGetCaptureInfo, which is safe on a capturing stream).
struct capture_state {
  capture_status status = capture_status::none;
  /// The capture's process-unique id; 0 when not capturing.
  unsigned long long id = 0;
  /// The graph being built (owned by the capture until it ends); nullptr when not capturing or
  /// when the capture was invalidated.
  cudaGraph_t graph = nullptr;

  /// True while the stream is in a capture, active or invalidated (either way it must be ended).
  [[nodiscard]] constexpr bool is_capturing() const noexcept { return status != capture_status::none; }
};

} // namespace streamlike

#endif // STREAMLIKE_CAPTURE_STATE_HPP
