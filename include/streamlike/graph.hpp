// streamlike/graph.hpp: move-only owners of a CUDA graph and of an executable graph.
//
// A `graph` (cudaGraph_t) is what a capture yields (capture.hpp); `instantiate()` makes a
// `graph_exec` (cudaGraphExec_t), which launches on any stream_like object. Both are move-only,
// like unique_stream: one owner, destroyed (never throwing) with the object. A graph_exec does not
// need its graph to live on: CUDA copies what it needs at instantiation.
#ifndef STREAMLIKE_GRAPH_HPP
#define STREAMLIKE_GRAPH_HPP

#include <streamlike/detail/export.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_view.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace streamlike {

class graph_exec;

/// Owns a cudaGraph_t (see the file comment).
class STREAMLIKE_API graph {
public:
  /// Empty: owns no graph.
  constexpr graph() noexcept = default;
  graph(const graph&) = delete;
  graph& operator=(const graph&) = delete;
  graph(graph&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  graph& operator=(graph&& other) noexcept {
    graph(std::move(other)).swap(*this);
    return *this;
  }
  ~graph();

  /// A new graph with no nodes (cudaGraphCreate). Throws streamlike::error if CUDA cannot make it.
  [[nodiscard]] static graph create();
  /// Takes ownership of a graph made elsewhere (cudaGraphCreate, cudaStreamEndCapture): it is
  /// destroyed with this object. nullptr is refused (std::invalid_argument).
  [[nodiscard]] static graph adopt(cudaGraph_t handle);

  /// False when empty (default-constructed, moved-from or released).
  [[nodiscard]] explicit operator bool() const noexcept { return handle_ != nullptr; }
  /// The handle, still owned; nullptr when empty.
  [[nodiscard]] cudaGraph_t get() const noexcept { return handle_; }
  /// Gives up ownership: the caller must destroy the returned handle. Empties *this.
  [[nodiscard]] cudaGraph_t release() noexcept { return std::exchange(handle_, nullptr); }

  /// The number of nodes (cudaGraphGetNodes). Throws streamlike::error on an empty graph.
  [[nodiscard]] std::size_t node_count() const;
  /// An executable graph (cudaGraphInstantiate with `flags`, 0 by default). Throws
  /// streamlike::error on an empty graph or when CUDA refuses to instantiate it.
  [[nodiscard]] graph_exec instantiate(unsigned long long flags = 0) const;

  void swap(graph& other) noexcept { std::swap(handle_, other.handle_); }
  friend void swap(graph& a, graph& b) noexcept { a.swap(b); }

private:
  explicit graph(cudaGraph_t handle) noexcept : handle_(handle) {}
  void require_handle(const char* what) const;
  cudaGraph_t handle_ = nullptr;
};

/// Owns a cudaGraphExec_t: an instantiated graph, launched on any stream_like object.
class STREAMLIKE_API graph_exec {
public:
  /// Empty: owns nothing.
  constexpr graph_exec() noexcept = default;
  graph_exec(const graph_exec&) = delete;
  graph_exec& operator=(const graph_exec&) = delete;
  graph_exec(graph_exec&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  graph_exec& operator=(graph_exec&& other) noexcept {
    graph_exec(std::move(other)).swap(*this);
    return *this;
  }
  /// Destroys the executable graph (cudaGraphExecDestroy); launches already queued still run.
  ~graph_exec();

  /// Takes ownership of an executable graph made elsewhere; nullptr is refused
  /// (std::invalid_argument).
  [[nodiscard]] static graph_exec adopt(cudaGraphExec_t handle);

  /// False when empty (default-constructed, moved-from or released).
  [[nodiscard]] explicit operator bool() const noexcept { return handle_ != nullptr; }
  /// The handle, still owned; nullptr when empty.
  [[nodiscard]] cudaGraphExec_t get() const noexcept { return handle_; }
  /// Gives up ownership: the caller must destroy the returned handle. Empties *this.
  [[nodiscard]] cudaGraphExec_t release() noexcept { return std::exchange(handle_, nullptr); }

  /// Queues one run of the graph on `stream` (cudaGraphLaunch): after the work queued there so
  /// far, before the work queued later. Refused by name on a capturing stream, before CUDA's own
  /// refusal would invalidate the capture (CUDA 13 does not capture graph launches). Throws
  /// streamlike::error on an empty graph_exec or a failed launch (and what get_stream throws,
  /// e.g. for an empty owner).
  template <class S>
    requires stream_like<S>
  void launch(S&& stream) const { launch_on(streamlike::get_stream(std::forward<S>(stream))); }
  /// Uploads the graph to the device ahead of its first launch (cudaGraphUpload), so that launch
  /// does not pay for it. Throws as launch does, and is refused on a capturing stream too.
  template <class S>
    requires stream_like<S>
  void upload(S&& stream) const { upload_on(streamlike::get_stream(std::forward<S>(stream))); }

  void swap(graph_exec& other) noexcept { std::swap(handle_, other.handle_); }
  friend void swap(graph_exec& a, graph_exec& b) noexcept { a.swap(b); }

private:
  friend class graph;
  explicit graph_exec(cudaGraphExec_t handle) noexcept : handle_(handle) {}
  void launch_on(stream_view stream) const;
  void upload_on(stream_view stream) const;
  void require_handle(const char* what) const;
  cudaGraphExec_t handle_ = nullptr;
};

} // namespace streamlike

#endif // STREAMLIKE_GRAPH_HPP
