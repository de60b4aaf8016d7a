// graph and graph_exec (include/streamlike/graph.hpp).
#include "capture_checks.hpp"
#include "error_messages.hpp"

#include <streamlike/error.hpp>
#include <streamlike/graph.hpp>

#include <stdexcept>

namespace streamlike {

graph::~graph() {
  if (handle_ != nullptr && cudaGraphDestroy(handle_) != cudaSuccess) (void)cudaGetLastError();
}

graph graph::create() {
  cudaGraph_t handle = nullptr;
  detail::throw_if_error(cudaGraphCreate(&handle, 0), "graph::create: cudaGraphCreate");
  return graph(handle);
}

graph graph::adopt(cudaGraph_t handle) {
  if (handle == nullptr) {
    throw std::invalid_argument("streamlike: graph::adopt: nullptr is not a graph; expected a cudaGraph_t from "
                                "cudaGraphCreate or cudaStreamEndCapture");
  }
  return graph(handle);
}

void graph::require_handle(const char* what) const {
  if (handle_ == nullptr) {
    detail::throw_empty("graph", what, "default-constructed, moved-from or released",
                        "one made by a capture, graph::create or graph::adopt");
  }
}

std::size_t graph::node_count() const {
  require_handle("node_count");
  std::size_t count = 0;
  detail::throw_if_error(cudaGraphGetNodes(handle_, nullptr, &count), "graph::node_count: cudaGraphGetNodes");
  return count;
}

graph_exec graph::instantiate(unsigned long long flags) const {
  require_handle("instantiate");
  cudaGraphExec_t exec = nullptr;
  detail::throw_if_error(cudaGraphInstantiate(&exec, handle_, flags), "graph::instantiate: cudaGraphInstantiate");
  return graph_exec(exec);
}

graph_exec::~graph_exec() {
  if (handle_ != nullptr && cudaGraphExecDestroy(handle_) != cudaSuccess) (void)cudaGetLastError();
}

graph_exec graph_exec::adopt(cudaGraphExec_t handle) {
  if (handle == nullptr) {
    throw std::invalid_argument("streamlike: graph_exec::adopt: nullptr is not an executable graph; expected a "
                                "cudaGraphExec_t from cudaGraphInstantiate");
  }
  return graph_exec(handle);
}

void graph_exec::require_handle(const char* what) const {
  if (handle_ == nullptr) {
    detail::throw_empty("graph_exec", what, "default-constructed, moved-from or released",
                        "one made by graph::instantiate or graph_exec::adopt");
  }
}

void graph_exec::launch_on(stream_view stream) const {
  require_handle("launch");
  // CUDA refuses a graph launch on a capturing stream (cudaErrorStreamCaptureUnsupported) and that
  // refusal invalidates the capture: refuse first, by name.
  detail::capture::refuse_if_capturing(stream.get(), "graph_exec", "launch", "launching a graph (cudaGraphLaunch)");
  detail::throw_if_error(cudaGraphLaunch(handle_, stream.get()), "graph_exec::launch: cudaGraphLaunch");
}

void graph_exec::upload_on(stream_view stream) const {
  require_handle("upload");
  detail::capture::refuse_if_capturing(stream.get(), "graph_exec", "upload", "uploading a graph (cudaGraphUpload)");
  detail::throw_if_error(cudaGraphUpload(handle_, stream.get()), "graph_exec::upload: cudaGraphUpload");
}

} // namespace streamlike
