#include "capture_checks.hpp"

#include "driver_entry_points.hpp"
#include "error_messages.hpp"

#include <string>

namespace streamlike::detail::capture {
namespace {

std::string qualified(std::string_view type, std::string_view operation) {
  std::string name(type);
  name += "::";
  name += operation;
  return name;
}

std::string reason(std::string_view why) {
  std::string text = "the stream is capturing a CUDA graph, and ";
  text += why;
  text += " would invalidate the capture; call it before the capture begins or after it ends "
          "(docs/cuda-graphs.md)";
  return text;
}

} // namespace

capturing_error::capturing_error(std::string_view type, std::string_view operation, std::string_view why)
    : error(cudaErrorStreamCaptureUnsupported, qualified(type, operation), reason(why)) {}

void throw_capturing(std::string_view type, std::string_view operation, std::string_view why) {
  throw capturing_error(type, operation, why);
}

namespace {

cudaError_t ask_status(cudaStream_t stream, cudaStreamCaptureStatus& status) noexcept {
  const auto& drv = driver::get();
  if (drv.stream_is_capturing != nullptr) {
    CUstreamCaptureStatus driver_status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (drv.stream_is_capturing(stream, &driver_status) == CUDA_SUCCESS) [[likely]] {
      status = static_cast<cudaStreamCaptureStatus>(driver_status);
      return cudaSuccess;
    }
  }
  // The runtime, for its own error (no driver, an invalid handle) where the driver had no answer.
  return cudaStreamIsCapturing(stream, &status);
}

} // namespace

cudaStreamCaptureStatus status_of(cudaStream_t stream, std::string_view type, std::string_view operation) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t code = ask_status(stream, status);
  if (code != cudaSuccess) [[unlikely]]
    throw_error_of(code, type, std::string(operation) + ": cudaStreamIsCapturing");
  return status;
}

cudaStreamCaptureStatus status_or_none(cudaStream_t stream) noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (ask_status(stream, status) != cudaSuccess) [[unlikely]] {
    (void)cudaGetLastError();
    return cudaStreamCaptureStatusNone;
  }
  return status;
}

void refuse_if_capturing(cudaStream_t stream, std::string_view type, std::string_view operation, std::string_view why) {
  // A handle CUDA cannot ask about is not capturing: the operation's own call then reports the
  // failure in its own words (no driver, an invalid handle).
  if (status_or_none(stream) != cudaStreamCaptureStatusNone) [[unlikely]]
    throw_capturing(type, operation, why);
}

capture_state state_of(cudaStream_t stream, std::string_view type, std::string_view operation) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  capture_state state;
  throw_if_error_of(cudaStreamGetCaptureInfo(stream, &status, &state.id, &state.graph), type,
                    std::string(operation) + ": cudaStreamGetCaptureInfo");
  state.status = static_cast<capture_status>(status);
  if (state.status == capture_status::none) state = capture_state{};
  return state;
}

} // namespace streamlike::detail::capture
