// streamcheck: whether a stream about to be captured synchronizes with the legacy default stream
// (then legacy-stream work invalidates its capture). Asked when cuStreamBeginCapture is entered,
// never once it has begun: on a capturing stream cuStreamGetFlags invalidates the capture, in every
// mode (docs/cuda-graphs.md, "What CUDA does"), and the checker must not break what it watches.
#ifndef STREAMLIKE_SRC_STREAMCHECK_STREAM_BLOCKING_HPP
#define STREAMLIKE_SRC_STREAMCHECK_STREAM_BLOCKING_HPP

#include <cuda.h>

#include <cstdint>

namespace streamlike::check {

/// The driver calls it makes, looked up rather than linked (the library loads without a driver).
struct stream_flag_queries {
  CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus*) = nullptr; // cuStreamIsCapturing: capture-safe
  CUresult (*get_flags)(CUstream, unsigned int*) = nullptr;             // cuStreamGetFlags: not
};

/// False only for a stream known to be non-blocking. A default stream, a stream already capturing
/// (whose flags cannot be asked without invalidating its capture) or a failed query: true, the
/// cautious answer.
inline bool stream_is_blocking(const stream_flag_queries& q, CUstream stream) noexcept {
  // 0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD: the default streams, blocking by definition.
  if (reinterpret_cast<std::uintptr_t>(stream) <= 2 || q.is_capturing == nullptr || q.get_flags == nullptr) return true;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (q.is_capturing(stream, &status) != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE) return true;
  unsigned int flags = 0;
  return !(q.get_flags(stream, &flags) == CUDA_SUCCESS && (flags & CU_STREAM_NON_BLOCKING) != 0);
}

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_STREAM_BLOCKING_HPP
