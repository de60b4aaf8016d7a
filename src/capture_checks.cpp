#include "capture_checks.hpp"

#include "driver_entry_points.hpp"
#include "error_messages.hpp"

#include <streamlike/current_stream.hpp>

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

capture_of_stream capture_or_none(cudaStream_t stream) noexcept {
  if (status_or_none(stream) == cudaStreamCaptureStatusNone) [[likely]]
    return {};
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  if (cudaStreamGetCaptureInfo(stream, &status, &id) != cudaSuccess) [[unlikely]] {
    (void)cudaGetLastError();
    return {true, 0};
  }
  return {status != cudaStreamCaptureStatusNone, id};
}

namespace {

struct noted_capture {
  cudaStream_t stream;
  cudaStreamCaptureMode mode;
  std::thread::id thread;
  unsigned long long id; // 0 until cudaStreamBeginCapture succeeded
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

// The calling thread's capture interaction mode (cuThreadExchangeStreamCaptureMode: documented to
// swap the calling thread's mode and do nothing else, and made inside captures by design, as CUDA's
// own example and torch's allocator do; test/gpu/event_capture.cu and capture_interaction.cu call
// it during captures of every mode and check that they stay active): asked by swapping it out and
// back. Global where the driver cannot say (the strictest reading:
// refusing is safe, invalidating is not).
cudaStreamCaptureMode thread_interaction_mode() noexcept {
  const auto exchange = driver::get().thread_exchange_stream_capture_mode;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  if (exchange == nullptr || exchange(&mode) != CUDA_SUCCESS) return cudaStreamCaptureModeGlobal;
  CUstreamCaptureMode restored = mode;
  (void)exchange(&restored);
  return static_cast<cudaStreamCaptureMode>(mode);
}

// The calling thread's current stream (current_stream(), every framework asked), where it could be
// capturing: not the handle 0 or cudaStreamLegacy (the legacy default stream cannot capture; torch
// names its default stream 0). Null for none, and where the current device cannot be read (no
// driver: the call being checked then reports that itself).
cudaStream_t current_stream_that_may_capture() noexcept {
  cudaStream_t current = nullptr;
  try {
    current = current_stream().get();
  } catch (...) {
    return nullptr;
  }
  return current == cudaStreamLegacy ? nullptr : current;
}

// What makes CUDA prohibit potentially unsafe calls on this thread now, if anything: the first
// capture found, in this order: this thread's own (capture_scope, or the current stream's), another
// thread's global one.
struct prohibiting_capture {
  enum class kind { none, own_scope, current_stream, other_thread } found = kind::none;
  unsigned long long id = 0;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  cudaStream_t stream = nullptr;
};

prohibiting_capture find_prohibiting(cudaStream_t current, const capture_of_stream& of_current,
                                     cudaStreamCaptureMode thread_mode) {
  prohibiting_capture own;
  prohibiting_capture other;
  bool current_is_a_scope = false;
  capture_registry& r = registry();
  if (r.count.load(std::memory_order_acquire) != 0) {
    const std::lock_guard lock(r.mutex);
    const std::thread::id me = std::this_thread::get_id();
    for (const noted_capture& c : r.captures) {
      current_is_a_scope = current_is_a_scope || (of_current.capturing && c.id != 0 && c.id == of_current.id);
      if (c.mode == cudaStreamCaptureModeRelaxed) continue; // prohibits nothing
      if (c.thread == me && own.found == prohibiting_capture::kind::none) {
        own = {prohibiting_capture::kind::own_scope, c.id, c.mode, c.stream};
      } else if (c.thread != me && c.mode == cudaStreamCaptureModeGlobal &&
                 other.found == prohibiting_capture::kind::none) {
        other = {prohibiting_capture::kind::other_thread, c.id, c.mode, c.stream};
      }
    }
  }
  // The current stream's capture, unless capture_scope began it (then its noted mode and thread
  // decided above): this thread's, in a mode taken to be global or thread-local.
  if (of_current.capturing && !current_is_a_scope && own.found == prohibiting_capture::kind::none)
    own = {prohibiting_capture::kind::current_stream, of_current.id, cudaStreamCaptureModeGlobal, current};
  switch (unsafe_call_prohibited_by(thread_mode, own.found != prohibiting_capture::kind::none,
                                    other.found != prohibiting_capture::kind::none)) {
    case prohibited_by::own_capture: return own;
    case prohibited_by::other_thread_capture: return other;
    case prohibited_by::nothing: break;
  }
  return {};
}

[[noreturn]] void throw_prohibited(const prohibiting_capture& p, cudaStreamCaptureMode thread_mode,
                                   std::string_view type, std::string_view operation, std::string_view why) {
  const std::string id = std::to_string(p.id);
  std::string reason;
  switch (p.found) {
    case prohibiting_capture::kind::own_scope:
      reason = std::string("this thread began a CUDA graph capture (capture_scope, ") + mode_name(p.mode) +
               " mode, capture id " + id + ") that is still under way, ";
      break;
    case prohibiting_capture::kind::current_stream:
      reason = "the calling thread's current stream is capturing a CUDA graph (capture id " + id +
               ") that streamlike did not begin (torch.cuda.graph, CuPy's begin_capture, cudaStreamBeginCapture); "
               "its mode cannot be asked of CUDA, so streamlike takes it for global or thread-local, ";
      break;
    case prohibiting_capture::kind::other_thread:
      reason = "another thread began a CUDA graph capture in global mode (capture_scope, capture id " + id +
               ") that is still under way, ";
      break;
    case prohibiting_capture::kind::none: break;
  }
  reason += "and while it runs CUDA prohibits ";
  reason += why;
  reason += " on a thread in ";
  reason += mode_name(thread_mode);
  reason += " capture interaction mode: the call would invalidate the capture. Call it after the capture ends, "
            "or from a thread in relaxed capture interaction mode (cudaThreadExchangeStreamCaptureMode), or "
            "capture in relaxed mode (docs/cuda-graphs.md)";
  throw error(cudaErrorStreamCaptureUnsupported, qualified(type, operation), reason);
}

} // namespace

void note_capture_begun(cudaStream_t stream, cudaStreamCaptureMode mode) {
  capture_registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.captures.push_back({stream, mode, std::this_thread::get_id(), 0});
  r.count.store(r.captures.size(), std::memory_order_release);
}

void note_capture_id(cudaStream_t stream, unsigned long long id) noexcept {
  capture_registry& r = registry();
  const std::lock_guard lock(r.mutex);
  for (noted_capture& c : r.captures) {
    if (c.stream == stream && c.id == 0) c.id = id;
  }
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
  // The eager path: no capture_scope capture noted and a current stream that is a default one (or
  // one that is not capturing: one driver query).
  const cudaStream_t current = current_stream_that_may_capture();
  const capture_of_stream of_current = current != nullptr ? capture_or_none(current) : capture_of_stream{};
  if (!of_current.capturing && registry().count.load(std::memory_order_acquire) == 0) [[likely]]
    return;
  const cudaStreamCaptureMode thread_mode = thread_interaction_mode();
  const prohibiting_capture p = find_prohibiting(current, of_current, thread_mode);
  if (p.found != prohibiting_capture::kind::none) throw_prohibited(p, thread_mode, type, operation, why);
}

} // namespace streamlike::detail::capture
