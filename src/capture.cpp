// capture_scope (include/streamlike/capture.hpp).
#include "capture_checks.hpp"
#include "error_messages.hpp"

#include <streamlike/capture.hpp>
#include <streamlike/error.hpp>

namespace streamlike {

capture_scope capture_scope::begin_on(stream_view stream, capture_mode mode) {
  // CUDA's own refusal (cudaErrorIllegalState) would invalidate the capture already under way.
  detail::capture::refuse_if_capturing(stream.get(), "capture_scope", "begin",
                                       "beginning a second capture on it (cudaStreamBeginCapture)");
  // Noted first (it may allocate), so that the checks of potentially unsafe calls know the capture
  // runs (capture_checks.hpp).
  const auto cuda_mode = static_cast<cudaStreamCaptureMode>(mode);
  detail::capture::note_capture_begun(stream.get(), cuda_mode);
  const cudaError_t code = cudaStreamBeginCapture(stream.get(), cuda_mode);
  if (code != cudaSuccess) {
    detail::capture::note_capture_ended(stream.get(), code);
    detail::throw_error(code, "capture_scope::begin: cudaStreamBeginCapture");
  }
  // Its id, so that the capture is known as this scope's when its stream is also current.
  detail::capture::note_capture_id(stream.get(), detail::capture::capture_or_none(stream.get()).id);
  return capture_scope(stream.get());
}

capture_scope::~capture_scope() {
  if (!active_) return;
  // Left without end(): an exception or an early return. End the capture so that the stream runs
  // work again, and discard what it recorded. An invalidated or unjoined capture ends with an
  // error and no graph; either way the stream is out of capture.
  cudaGraph_t discarded = nullptr;
  const cudaError_t code = cudaStreamEndCapture(stream_, &discarded);
  detail::capture::note_capture_ended(stream_, code);
  if (code != cudaSuccess) (void)cudaGetLastError();
  if (discarded != nullptr && cudaGraphDestroy(discarded) != cudaSuccess) (void)cudaGetLastError();
}

graph capture_scope::end() {
  if (!active_) {
    throw error(cudaErrorIllegalState, "capture_scope::end",
                "the capture has already ended (end() was called, or the scope was moved from); expected an "
                "active capture_scope");
  }
  active_ = false;
  cudaGraph_t built = nullptr;
  const cudaError_t code = cudaStreamEndCapture(stream_, &built);
  detail::capture::note_capture_ended(stream_, code);
  if (code != cudaSuccess) {
    if (built != nullptr && cudaGraphDestroy(built) != cudaSuccess) (void)cudaGetLastError();
    detail::throw_error(code, "capture_scope::end: cudaStreamEndCapture");
  }
  return graph::adopt(built);
}

} // namespace streamlike
