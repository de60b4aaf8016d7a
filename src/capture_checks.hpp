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

// The captures streamlike began (capture_scope), in global or thread-local mode: CUDA prohibits
// "potentially unsafe" calls (cudaEventQuery, cudaEventSynchronize, ...) while they run, and a
// prohibited call invalidates them. Captures begun elsewhere (cudaStreamBeginCapture, torch, CuPy)
// are not known here; CUDA judges calls made during those.

/// Notes a capture about to begin on `stream` in `mode` on this thread (before
/// cudaStreamBeginCapture: it may allocate). Relaxed captures are not noted: they prohibit nothing.
void note_capture_begun(cudaStream_t stream, cudaStreamCaptureMode mode);
/// Forgets the capture of `stream` once cudaStreamEndCapture (or a failed begin) returned `result`
/// (cudaErrorStreamCaptureWrongThread leaves the capture running, so it stays noted).
void note_capture_ended(cudaStream_t stream, cudaError_t result) noexcept;

/// Throws a streamlike::error (code cudaErrorStreamCaptureUnsupported) naming "<type>::<operation>"
/// when a noted capture makes CUDA prohibit a potentially unsafe call (`why`) on this thread: one
/// begun on this thread in global or thread-local mode, or one begun on any thread in global mode,
/// as the calling thread's own interaction mode (cudaThreadExchangeStreamCaptureMode) decides: a
/// thread in relaxed mode is never refused, one in thread-local mode only for its own captures.
/// Costs one atomic load while no capture is noted.
void refuse_if_unsafe_calls_prohibited(std::string_view type, std::string_view operation, std::string_view why);

} // namespace streamlike::detail::capture

#endif // STREAMLIKE_SRC_CAPTURE_CHECKS_HPP
