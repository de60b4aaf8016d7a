// What streamlike asks before a CUDA call that would invalidate a graph capture, and how it
// refuses (src/capture_checks.cpp). The rule: no streamlike call invalidates a capture; it
// works on a capturing stream or throws, before any such call, a streamlike::error naming the
// operation and saying the stream is capturing.
#ifndef STREAMLIKE_SRC_CAPTURE_CHECKS_HPP
#define STREAMLIKE_SRC_CAPTURE_CHECKS_HPP

#include <streamlike/capture_state.hpp>
#include <streamlike/error.hpp>

#include <cuda_runtime_api.h>

#include <string_view>

namespace streamlike::detail::capture {

/// The refusal: a streamlike::error (code cudaErrorStreamCaptureUnsupported) for "<type>::<operation>"
/// saying the stream is capturing and what to do instead. Its own type, so the library can tell
/// it from other errors (a deferred query falls back on it).
class capturing_error : public error {
public:
  capturing_error(std::string_view type, std::string_view operation, std::string_view why);
};

[[noreturn]] void throw_capturing(std::string_view type, std::string_view operation, std::string_view why);

/// The stream's capture status (safe in every mode), asked of the driver (cuStreamIsCapturing)
/// where it answers, else of the runtime (cudaStreamIsCapturing): the runtime's call costs about
/// four times as much, which the eager paths that ask first (wait, is_done, sync) would feel.
/// Throws streamlike::error naming "<type>::<operation>" when neither can answer.
[[nodiscard]] cudaStreamCaptureStatus status_of(cudaStream_t stream, std::string_view type, std::string_view operation);

/// The same, with None for a stream CUDA cannot ask about (an invalid handle, no driver), and no
/// error of CUDA's left behind: the caller's next call on the stream reports the failure itself.
[[nodiscard]] cudaStreamCaptureStatus status_or_none(cudaStream_t stream) noexcept;

/// Throws capturing_error if `stream` is in a capture (active or invalidated); `why` says which
/// CUDA call the operation would have to make. A stream CUDA cannot ask about (an invalid
/// handle, no driver) passes: the operation's own call then reports the failure.
void refuse_if_capturing(cudaStream_t stream, std::string_view type, std::string_view operation, std::string_view why);

/// cudaStreamGetCaptureInfo, as a capture_state; throws streamlike::error naming
/// "<type>::<operation>" on failure.
[[nodiscard]] capture_state state_of(cudaStream_t stream, std::string_view type, std::string_view operation);

/// The id of the capture `stream` is in (active or invalidated); 0 when it is in none or CUDA
/// cannot ask about it (the caller's next call on the stream then reports the failure). Capture-
/// safe: the cheap status query first, cudaStreamGetCaptureInfo only for a capturing stream.
[[nodiscard]] unsigned long long capture_id_or_none(cudaStream_t stream, std::string_view type,
                                                    std::string_view operation);

/// Whether `stream` is in a capture (active or invalidated) and that capture's id (0 where CUDA
/// could not say which). Capture-safe (the status query first, cudaStreamGetCaptureInfo only for a
/// capturing stream) and quiet: a stream CUDA cannot ask about is not capturing, and leaves no error
/// of CUDA's behind.
struct capture_of_stream {
  bool capturing = false;
  unsigned long long id = 0;
};
[[nodiscard]] capture_of_stream capture_or_none(cudaStream_t stream) noexcept;

// Calls that CUDA's capture modes prohibit as "potentially unsafe" (cudaEventQuery,
// cudaEventSynchronize, cudaStreamQuery and cudaStreamSynchronize of a stream that is not
// capturing, ...): made while a capture that prohibits them runs, they invalidate it. CUDA's rule
// (cudaThreadExchangeStreamCaptureMode), for the calling thread in interaction mode
//   global:       prohibited while this thread has a global or thread-local capture under way, or
//                 any thread has a global one;
//   thread-local: prohibited while this thread has a global or thread-local capture under way;
//   relaxed:      never prohibited.
// What streamlike knows of the captures under way, before the call:
//   - the captures capture_scope began (noted below, with their mode and thread);
//   - the capture of the calling thread's current stream (current_stream(): torch.cuda.graph and
//     CuPy's capture make the capturing stream current), taken for this thread's. Its mode cannot
//     be asked of CUDA; unless capture_scope began it, it counts as global or thread-local (refusing
//     is safe, invalidating is not: docs/cuda-graphs.md, "Calls a capture prohibits").
// Captures begun elsewhere whose stream is not current here are not seen; CUDA judges those calls.

/// CUDA's rule above as a decision, for every checker of it (this file, the streamcheck tool): what
/// prohibits a potentially unsafe call by a thread in interaction mode `thread_mode`, given whether
/// that thread has a global or thread-local capture under way (`own_strict_capture`) and whether
/// another thread has a global one (`other_thread_global_capture`). The thread's own comes first.
enum class prohibited_by { nothing, own_capture, other_thread_capture };
[[nodiscard]] constexpr prohibited_by unsafe_call_prohibited_by(cudaStreamCaptureMode thread_mode,
                                                                bool own_strict_capture,
                                                                bool other_thread_global_capture) noexcept {
  if (thread_mode == cudaStreamCaptureModeRelaxed) return prohibited_by::nothing;
  if (own_strict_capture) return prohibited_by::own_capture;
  if (thread_mode == cudaStreamCaptureModeGlobal && other_thread_global_capture)
    return prohibited_by::other_thread_capture;
  return prohibited_by::nothing;
}

/// "global", "thread-local", "relaxed": a mode as the refusals and streamcheck's reports name it.
[[nodiscard]] constexpr const char* mode_name(cudaStreamCaptureMode mode) noexcept {
  switch (mode) {
    case cudaStreamCaptureModeGlobal: return "global";
    case cudaStreamCaptureModeThreadLocal: return "thread-local";
    case cudaStreamCaptureModeRelaxed: return "relaxed";
  }
  return "unknown";
}

/// Notes a capture about to begin on `stream` in `mode` on this thread (before
/// cudaStreamBeginCapture: it may allocate).
void note_capture_begun(cudaStream_t stream, cudaStreamCaptureMode mode);
/// Notes the id of the capture just begun on `stream` (once cudaStreamBeginCapture succeeded), so
/// that the capture is recognised when its stream is also the current stream.
void note_capture_id(cudaStream_t stream, unsigned long long id) noexcept;
/// Forgets the capture of `stream` once cudaStreamEndCapture (or a failed begin) returned `result`
/// (cudaErrorStreamCaptureWrongThread leaves the capture running, so it stays noted).
void note_capture_ended(cudaStream_t stream, cudaError_t result) noexcept;

/// Throws a streamlike::error (code cudaErrorStreamCaptureUnsupported) naming "<type>::<operation>"
/// and the capture (its id, who began it, its mode) when a capture under way makes CUDA prohibit
/// the potentially unsafe call `why` on this thread, by the rule above. Costs, while no
/// capture_scope capture runs: reading the current stream (no CUDA call but the current device's)
/// and, only where that is not a default stream, one capture-status query of it.
void refuse_if_unsafe_calls_prohibited(std::string_view type, std::string_view operation, std::string_view why);

} // namespace streamlike::detail::capture

#endif // STREAMLIKE_SRC_CAPTURE_CHECKS_HPP
