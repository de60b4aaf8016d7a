#include "capture_checks.hpp"

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

cudaStreamCaptureStatus status_of(cudaStream_t stream, std::string_view type, std::string_view operation) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t code = cudaStreamIsCapturing(stream, &status);
  if (code != cudaSuccess) [[unlikely]]
    throw_error_of(code, type, std::string(operation) + ": cudaStreamIsCapturing");
  return status;
}

void refuse_if_capturing(cudaStream_t stream, std::string_view type, std::string_view operation, std::string_view why) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t code = cudaStreamIsCapturing(stream, &status);
  if (code != cudaSuccess) [[unlikely]] {
    // A handle CUDA cannot ask about is not capturing: let the call itself report the failure,
    // in its own words (no driver, an invalid handle), with no error of ours left behind.
    (void)cudaGetLastError();
    return;
  }
  if (status != cudaStreamCaptureStatusNone) [[unlikely]]
    throw_capturing(type, operation, why);
}

capture_state state_of(cudaStream_t stream, std::string_view type) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  capture_state state;
  throw_if_error_of(cudaStreamGetCaptureInfo(stream, &status, &state.id, &state.graph), type,
                    "capture_info: cudaStreamGetCaptureInfo");
  state.status = static_cast<capture_status>(status);
  if (state.status == capture_status::none) state = capture_state{};
  return state;
}

} // namespace streamlike::detail::capture
