// streamlike/capture.hpp: record the work queued on a stream into a CUDA graph, in a scope.
//
//   streamlike::graph g;
//   {
//     auto scope = streamlike::capture_scope::begin(stream);     // cudaStreamBeginCapture
//     my_library_call(stream);                                    // recorded, not run
//     g = scope.end();                                            // cudaStreamEndCapture
//   }
//   streamlike::graph_exec exec = g.instantiate();
//   exec.launch(stream);                                          // replays the work
//
// If the scope is left without end() (an exception, an early return), its destructor ends the
// capture and destroys the graph: the stream is out of capture and usable again. streamlike::
// capture(stream, body) does the same in one call. See docs/cuda-graphs.md.
#ifndef STREAMLIKE_CAPTURE_HPP
#define STREAMLIKE_CAPTURE_HPP

#include <streamlike/capture_state.hpp>
#include <streamlike/detail/export.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/graph.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_view.hpp>

#include <cuda_runtime_api.h>

#include <functional>
#include <utility>

namespace streamlike {

/// cudaStreamCaptureMode: which CUDA calls made during the capture CUDA refuses (and lets
/// invalidate it) as potentially unsafe.
enum class capture_mode {
  /// Unsafe calls are refused in any thread while the capture lasts (CUDA's default, and the
  /// one torch.cuda.graph uses).
  global = cudaStreamCaptureModeGlobal,
  /// Unsafe calls are refused in the capturing thread only.
  thread_local_ = cudaStreamCaptureModeThreadLocal,
  /// Nothing is refused for being unsafe; the calls that invalidate a capture still do.
  relaxed = cudaStreamCaptureModeRelaxed,
};

/// An active capture of one stream (RAII; see the file comment). Move-only; the stream must
/// outlive the scope.
class STREAMLIKE_API capture_scope {
public:
  /// Begins capturing `stream` (any stream_like object; an owner as an lvalue) in `mode`
  /// (cudaStreamBeginCapture). Throws streamlike::error if CUDA refuses (e.g. the legacy default
  /// stream), and, without touching the capture, for a stream that is already capturing.
  template <class S>
    requires stream_like<S>
  [[nodiscard]] static capture_scope begin(S&& stream, capture_mode mode = capture_mode::global) {
    return begin_on(streamlike::get_stream(std::forward<S>(stream)), mode);
  }

  capture_scope(const capture_scope&) = delete;
  capture_scope& operator=(const capture_scope&) = delete;
  capture_scope(capture_scope&& other) noexcept
      : stream_(other.stream_), active_(std::exchange(other.active_, false)) {}
  capture_scope& operator=(capture_scope&&) = delete;
  /// Ends a capture that is still active and destroys its graph; never throws.
  ~capture_scope();

  /// Ends the capture (cudaStreamEndCapture) and hands over the graph. Throws streamlike::error if
  /// the capture was invalidated, if a stream forked into it was not joined back
  /// (cudaErrorStreamCaptureUnjoined), or if end() was already called; the capture is over either
  /// way.
  [[nodiscard]] graph end();

  /// True until end() (or the destructor) ends the capture.
  [[nodiscard]] bool active() const noexcept { return active_; }
  /// The capturing stream.
  [[nodiscard]] stream_view stream() const noexcept { return stream_view{stream_}; }

private:
  explicit capture_scope(cudaStream_t stream) noexcept : stream_(stream), active_(true) {}
  static capture_scope begin_on(stream_view stream, capture_mode mode);

  cudaStream_t stream_;
  bool active_;
};

/// Captures what `body(view)` queues on `stream` into a graph: a capture_scope around one call.
/// If `body` throws, the capture is ended, its graph destroyed and the exception passed on.
template <class S, class Body>
  requires stream_like<S> && std::invocable<Body&, stream_view>
[[nodiscard]] graph capture(S&& stream, Body&& body, capture_mode mode = capture_mode::global) {
  capture_scope scope = capture_scope::begin(std::forward<S>(stream), mode);
  std::invoke(body, scope.stream());
  return scope.end();
}

} // namespace streamlike

#endif // STREAMLIKE_CAPTURE_HPP
