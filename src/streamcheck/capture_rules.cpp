#include "capture_rules.hpp"

#include "../capture_checks.hpp"
#include "report.hpp"

#include <algorithm>

namespace streamlike::check {
namespace {

using detail::capture::mode_name;

std::string capture_words(std::uintptr_t stream, cudaStreamCaptureMode mode, std::uint64_t thread, bool own) {
  return std::string("a capture of stream ") + stream_name(stream) + " in " + mode_name(mode) + " mode begun by " +
         (own ? "this thread" : "thread " + std::to_string(thread));
}

} // namespace

void capture_tracker::note(const call_event& e) {
  if (!e.succeeded) return;
  const std::lock_guard lock(mutex_);
  if (e.kind == call_kind::capture_mode) {
    thread_modes_[e.thread] = e.mode;
  } else if (e.kind == call_kind::capture_begin) {
    captures_.push_back({e.stream, e.mode, e.thread, e.blocking});
  } else {
    const auto found =
        std::find_if(captures_.begin(), captures_.end(), [&](const capture& c) { return c.stream == e.stream; });
    if (found != captures_.end()) captures_.erase(found);
  }
  count_.store(captures_.size(), std::memory_order_release);
}

void capture_tracker::forget_thread(std::uint64_t thread) {
  const std::lock_guard lock(mutex_);
  thread_modes_.erase(thread);
}

cudaStreamCaptureMode capture_tracker::mode_of(std::uint64_t thread) const {
  const auto found = thread_modes_.find(thread);
  return found == thread_modes_.end() ? cudaStreamCaptureModeGlobal : found->second; // CUDA's default
}

std::string capture_tracker::breaker(const call_event& e) const {
  if (!any()) [[likely]]
    return {};
  // While captures run, a launch or copy can break one only from the legacy default stream.
  const bool punished = capture_punished(e.kind);
  if (!punished && !(e.has_stream && e.stream == legacy_stream)) return {};
  const std::lock_guard lock(mutex_);
  if (punished) {
    // A synchronization or query of the capturing stream itself: illegal in every mode.
    const auto itself = std::find_if(captures_.begin(), captures_.end(),
                                     [&](const capture& c) { return e.has_stream && c.stream == e.stream; });
    if (itself != captures_.end()) {
      std::string why = e.api.empty() ? std::string("the call") : std::string(e.api);
      return why + " waits on or asks about " +
             capture_words(itself->stream, itself->mode, itself->thread, itself->thread == e.thread) +
             ", which a capture never allows: the capture would be invalidated";
    }
    // CUDA's rule for potentially unsafe calls, the one streamlike's own refusals follow.
    const capture* own = nullptr;
    const capture* other = nullptr;
    for (const capture& c : captures_) {
      if (c.mode == cudaStreamCaptureModeRelaxed) continue;
      if (c.thread == e.thread && own == nullptr) own = &c;
      if (c.thread != e.thread && c.mode == cudaStreamCaptureModeGlobal && other == nullptr) other = &c;
    }
    const cudaStreamCaptureMode thread_mode = mode_of(e.thread);
    const auto by = detail::capture::unsafe_call_prohibited_by(thread_mode, own != nullptr, other != nullptr);
    const capture* c = by == detail::capture::prohibited_by::own_capture            ? own
                       : by == detail::capture::prohibited_by::other_thread_capture ? other
                                                                                    : nullptr;
    if (c == nullptr) return {};
    return "while " + capture_words(c->stream, c->mode, c->thread, c->thread == e.thread) +
           " is active, CUDA prohibits this call on a thread in " + mode_name(thread_mode) +
           " capture interaction mode: it would invalidate the capture. Make it before the capture begins "
           "or after it ends, or from a thread in relaxed mode (cudaThreadExchangeStreamCaptureMode)";
  }
  // The legacy default stream synchronizes with every blocking stream, the capturing one too.
  const auto blocking = std::find_if(captures_.begin(), captures_.end(), [](const capture& c) { return c.blocking; });
  if (blocking == captures_.end()) return {};
  return "work on the legacy default stream synchronizes with every blocking stream, and " +
         capture_words(blocking->stream, blocking->mode, blocking->thread, blocking->thread == e.thread) +
         " is active on a blocking stream: the capture would be invalidated (cudaErrorStreamCaptureImplicit). "
         "Use the capturing stream, or create it non-blocking";
}

} // namespace streamlike::check
