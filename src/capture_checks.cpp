#include "capture_checks.hpp"

#include "driver_entry_points.hpp"
#include "error_messages.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

unsigned long long capture_id_or_none(cudaStream_t stream, std::string_view type, std::string_view operation) {
  if (status_or_none(stream) == cudaStreamCaptureStatusNone) [[likely]]
    return 0;
  return state_of(stream, type, operation).id;
}

namespace {

struct noted_capture {
  cudaStream_t stream;
  cudaStreamCaptureMode mode;
  std::thread::id thread;
};

// Never destroyed: a capture_scope may end during static destruction.
struct capture_registry {
  std::mutex mutex;
  std::vector<noted_capture> captures;
  std::atomic<std::size_t> count{0}; // captures.size(), read without the lock
};

capture_registry& registry() {
  static auto* const r = new capture_registry;
  return *r;
}

// The calling thread's capture interaction mode (cuThreadExchangeStreamCaptureMode, which is itself
// allowed during a capture): asked by swapping it out and back. Global where the driver cannot say
// (the strictest reading: refusing is safe, invalidating is not).
cudaStreamCaptureMode thread_interaction_mode() noexcept {
  const auto exchange = driver::get().thread_exchange_stream_capture_mode;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  if (exchange == nullptr || exchange(&mode) != CUDA_SUCCESS) return cudaStreamCaptureModeGlobal;
  CUstreamCaptureMode restored = mode;
  (void)exchange(&restored);
  return static_cast<cudaStreamCaptureMode>(mode);
}

} // namespace

void note_capture_begun(cudaStream_t stream, cudaStreamCaptureMode mode) {
  if (mode == cudaStreamCaptureModeRelaxed) return;
  capture_registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.captures.push_back({stream, mode, std::this_thread::get_id()});
  r.count.store(r.captures.size(), std::memory_order_release);
}

void note_capture_ended(cudaStream_t stream, cudaError_t result) noexcept {
  if (result == cudaErrorStreamCaptureWrongThread) return; // still capturing
  capture_registry& r = registry();
  if (r.count.load(std::memory_order_acquire) == 0) return;
  const std::lock_guard lock(r.mutex);
  const auto found = std::find_if(r.captures.begin(), r.captures.end(),
                                  [stream](const noted_capture& c) { return c.stream == stream; });
  if (found == r.captures.end()) return;
  r.captures.erase(found);
  r.count.store(r.captures.size(), std::memory_order_release);
}

void refuse_if_unsafe_calls_prohibited(std::string_view type, std::string_view operation, std::string_view why) {
  capture_registry& r = registry();
  if (r.count.load(std::memory_order_acquire) == 0) [[likely]]
    return;
  bool own = false;        // a global or thread-local capture begun on this thread
  bool any_global = false; // a global capture begun on any thread
  {
    const std::lock_guard lock(r.mutex);
    const std::thread::id me = std::this_thread::get_id();
    for (const noted_capture& c : r.captures) {
      own = own || c.thread == me;
      any_global = any_global || c.mode == cudaStreamCaptureModeGlobal;
    }
  }
  if (!own && !any_global) return;
  const cudaStreamCaptureMode mine = thread_interaction_mode();
  const bool prohibited =
      (mine == cudaStreamCaptureModeGlobal && (own || any_global)) || (mine == cudaStreamCaptureModeThreadLocal && own);
  if (!prohibited) return;
  std::string reason = own ? "this thread began a CUDA graph capture (capture_scope) that is still under way, "
                           : "another thread began a CUDA graph capture in global mode (capture_scope) that is still "
                             "under way, ";
  reason += "and CUDA prohibits ";
  reason += why;
  reason += " during it: the call would invalidate the capture. Call it after the capture ends, or from a thread "
            "in relaxed capture interaction mode (cudaThreadExchangeStreamCaptureMode), or capture in relaxed "
            "mode (docs/cuda-graphs.md)";
  throw error(cudaErrorStreamCaptureUnsupported, qualified(type, operation), reason);
}

} // namespace streamlike::detail::capture
