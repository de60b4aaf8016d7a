// streamlike/stream_view.hpp: the non-owning view of a CUDA stream.
//
// Exactly one cudaStream_t in size, trivially copyable, passed in a register. It converts
// implicitly from and to cudaStream_t and cuda::stream_ref, so it drops into any API that takes
// either. Like cuda::stream_ref it cannot be made from `0`, `nullptr` or any integer (an integer
// is not a stream: see stream_encodings.hpp for the named decoders), and unlike CCCL 3.0's
// stream_ref it has no default constructor (CCCL deprecated its own, NVIDIA/cccl#5310): the
// default streams are named.
//
// A view never keeps its stream alive. It is valid while whoever owns the stream keeps it.
#ifndef STREAMLIKE_STREAM_VIEW_HPP
#define STREAMLIKE_STREAM_VIEW_HPP

#include <streamlike/capture_state.hpp>
#include <streamlike/config.hpp>
#include <streamlike/detail/export.hpp>

#include <concepts>
#include <cstddef>
#include <functional>

namespace streamlike {

class event;          // event.hpp, which includes this header: include it to call record()
struct event_options; // event.hpp

/// A non-owning view of a CUDA stream (see the file comment).
class STREAMLIKE_API stream_view {
public:
  using value_type = cudaStream_t;

  // No "default stream" by accident: say which one with legacy_default() or per_thread_default().
  stream_view() = delete;

  /// Views `handle` (implicit, as cuda::stream_ref): any handle, 0 included, whose meaning is the
  /// caller's translation unit's (default_stream.hpp).
  constexpr stream_view(cudaStream_t handle) noexcept : handle_(handle) {}
  /// Views the stream `ref` views.
  constexpr stream_view(cuda::stream_ref ref) noexcept : handle_(ref.get()) {}

  // An integer is not a stream (`stream_view{0}` is the classic bug). Decode integers with the
  // named functions of stream_encodings.hpp, which say which convention they follow.
  template <class Integer>
    requires std::integral<Integer> stream_view(Integer)
  = delete;
  stream_view(std::nullptr_t) = delete;

  /// The CUDA legacy default stream (cudaStreamLegacy): synchronizes with all blocking streams.
  [[nodiscard]] static stream_view legacy_default() noexcept { return stream_view{cudaStreamLegacy}; }
  /// The calling host thread's default stream (cudaStreamPerThread).
  [[nodiscard]] static stream_view per_thread_default() noexcept { return stream_view{cudaStreamPerThread}; }

  /// The handle, as given.
  [[nodiscard]] constexpr cudaStream_t get() const noexcept { return handle_; }
  constexpr operator cudaStream_t() const noexcept { return handle_; }
  constexpr operator cuda::stream_ref() const noexcept { return cuda::stream_ref{handle_}; }

  /// True for the three handles that name a default stream: 0, cudaStreamLegacy and
  /// cudaStreamPerThread. Which stream `0` means depends on the translation unit that looks at
  /// it: ask is_legacy_default()/is_per_thread_default() of default_stream.hpp.
  [[nodiscard]] bool is_default() const noexcept {
    return handle_ == cudaStream_t{} || handle_ == cudaStreamLegacy || handle_ == cudaStreamPerThread;
  }

  // Queries, each a CUDA call that throws streamlike::error (naming the CUDA error and the
  // query) on failure. They run in the compiled library, which reads the handle 0 as the legacy
  // default stream: in a translation unit built for per-thread default streams, pass
  // resolve_default(view) (default_stream.hpp). The default streams answer for the current device.
  //
  // Under CUDA graph capture (docs/cuda-graphs.md) none of them invalidates the capture: each
  // works on a capturing stream, or (marked "refused while capturing") throws a streamlike::error
  // naming the operation and saying the stream is capturing, before any CUDA call that would.

  /// The device the stream belongs to, asked of the stream's context (cuStreamGetCtx,
  /// cuCtxGetDevice): works while capturing, where cudaStreamGetDevice would invalidate it.
  [[nodiscard]] int device() const;
  /// A process-unique id (cudaStreamGetId): handles are reused after destruction, ids are not.
  /// Refused while capturing (no capture-safe way to it exists).
  [[nodiscard]] unsigned long long id() const;
  /// cudaStreamDefault or cudaStreamNonBlocking. Refused while capturing.
  [[nodiscard]] unsigned int flags() const;
  /// The stream's priority (cudaStreamGetPriority; lower numbers are higher priorities).
  [[nodiscard]] int priority() const;
  /// True while the stream is in a CUDA graph capture, active or invalidated
  /// (cudaStreamIsCapturing).
  [[nodiscard]] bool is_capturing() const;
  /// The stream's capture status, capture id and the graph being built (cudaStreamGetCaptureInfo).
  [[nodiscard]] capture_state capture_info() const;
  /// True once all work queued so far has completed (cudaStreamQuery). Refused while capturing.
  [[nodiscard]] bool is_done() const;
  /// Blocks the calling thread until all work queued so far has completed. Refused while capturing.
  void sync() const;
  /// Work queued on this stream from now on waits for `event` (cudaStreamWaitEvent). While this
  /// stream captures, the event must have been recorded in the same capture (CUDA rejects any
  /// other with cudaErrorStreamCaptureIsolation; streamlike cannot tell where a raw event was
  /// recorded): prefer wait(producer), which checks.
  void wait(cudaEvent_t event) const;
  /// Work queued on this stream from now on waits for the work already queued on `producer`,
  /// also across devices; a no-op when both are the same stream. Uses a cached event (see
  /// ordering.hpp, whose streamlike::wait(consumer, producer) takes any two stream_like objects).
  /// Under capture: a stream outside the capture waiting on a capturing producer joins the
  /// capture (a fork), a capturing stream waiting on a producer of the same capture joins it back;
  /// a capturing stream waiting on work outside its capture is refused.
  void wait(stream_view producer) const;
  // Neither 0 nor nullptr is an event or a stream.
  template <class Integer>
    requires std::integral<Integer>
  void wait(Integer) const = delete;
  void wait(std::nullptr_t) const = delete;
  /// A new event holding the work queued on this stream so far, created on the stream's device
  /// (asked capture-safely) unless options.device says otherwise: what the owners' record() does,
  /// its errors naming "stream_view::record". Works while capturing (the event remembers the
  /// capture: event.hpp). Two overloads, not a default argument: event_options is incomplete here.
  [[nodiscard]] event record() const;
  [[nodiscard]] event record(const event_options& options) const;

  // Equality compares handles, as cuda::stream_ref does: `0` and cudaStreamLegacy compare unequal
  // even where they name the same stream (resolve_default() first to compare what they mean).
  [[nodiscard]] friend constexpr bool operator==(stream_view, stream_view) noexcept = default;
  // Exact overloads so that comparing with either handle type is not ambiguous with the
  // built-in pointer comparison or with cuda::stream_ref's own operator==.
  [[nodiscard]] friend constexpr bool operator==(stream_view lhs, cudaStream_t rhs) noexcept {
    return lhs.handle_ == rhs;
  }
  [[nodiscard]] friend constexpr bool operator==(stream_view lhs, cuda::stream_ref rhs) noexcept {
    return lhs.handle_ == rhs.get();
  }
  // `view == 0` would compare with the ambiguous handle 0 (cuda::stream_ref refuses it too).
  template <class Integer>
    requires std::integral<Integer>
  friend bool operator==(stream_view, Integer) = delete;
  friend bool operator==(stream_view, std::nullptr_t) = delete;

private:
  cudaStream_t handle_;
};

static_assert(sizeof(stream_view) == sizeof(cudaStream_t));
static_assert(std::is_trivially_copyable_v<stream_view>);

} // namespace streamlike

template <>
struct std::hash<streamlike::stream_view> {
  [[nodiscard]] std::size_t operator()(streamlike::stream_view view) const noexcept {
    return std::hash<cudaStream_t>{}(view.get());
  }
};

#endif // STREAMLIKE_STREAM_VIEW_HPP
