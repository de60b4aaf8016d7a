// The fake CUDA's runtime functions: graphs, their executables and user objects (what they model: fake_cuda.h).
#include "fake_cuda_model.hpp"

using namespace fake_cuda_model;

extern "C" {

cudaError_t CUDARTAPI cudaGraphCreate(cudaGraph_t* graph, unsigned int flags) {
  (void)flags;
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cudaGraphCreate");
  if (graph == nullptr) return fail(cudaErrorInvalidValue);
  *graph = static_cast<cudaGraph_t>(f.new_handle());
  f.graphs[*graph] = graph_state{};
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGraphDestroy(cudaGraph_t graph) {
  fake& f = state();
  deferred due;
  {
    std::lock_guard guard(f.lock);
    f.count("cudaGraphDestroy");
    if (f.graphs.count(graph) == 0) return fail(cudaErrorInvalidValue);
    f.destroy_graph(graph, due);
  }
  run(due);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  (void)nodes;
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cudaGraphGetNodes");
  auto it = f.graphs.find(graph);
  if (it == f.graphs.end() || count == nullptr) return fail(cudaErrorInvalidValue);
  *count = it->second.nodes;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
  (void)flags;
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cudaGraphInstantiate");
  auto it = f.graphs.find(graph);
  if (it == f.graphs.end() || exec == nullptr) return fail(cudaErrorInvalidValue);
  *exec = static_cast<cudaGraphExec_t>(f.new_handle());
  // An executable graph keeps the graph's user objects too.
  for (const auto& [object, count] : it->second.retained) f.user_objects[object].count += count;
  f.execs[*exec] = it->second.retained;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGraphExecDestroy(cudaGraphExec_t exec) {
  fake& f = state();
  deferred due;
  {
    std::lock_guard guard(f.lock);
    f.count("cudaGraphExecDestroy");
    auto it = f.execs.find(exec);
    if (it == f.execs.end()) return fail(cudaErrorInvalidValue);
    const auto retained = it->second;
    f.execs.erase(it);
    for (const auto& [object, count] : retained) f.release(object, count, due);
  }
  run(due);
  return cudaSuccess;
}

namespace {
cudaError_t launch_or_upload(const char* name, cudaGraphExec_t exec, cudaStream_t stream) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count(name);
  stream_state* s = f.find(stream);
  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (f.execs.count(exec) == 0) return fail(cudaErrorInvalidValue);
  if (f.unsafe_on(*s, name)) return fail(cudaErrorStreamCaptureUnsupported);
  return cudaSuccess;
}
} // namespace

cudaError_t CUDARTAPI cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  return launch_or_upload("cudaGraphLaunch", exec, stream);
}

cudaError_t CUDARTAPI cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream) {
  return launch_or_upload("cudaGraphUpload", exec, stream);
}

cudaError_t CUDARTAPI cudaUserObjectCreate(cudaUserObject_t* object, void* ptr, cudaHostFn_t destroy,
                                           unsigned int count, unsigned int flags) {
  (void)flags;
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cudaUserObjectCreate");
  if (object == nullptr || destroy == nullptr || count == 0) return fail(cudaErrorInvalidValue);
  *object = static_cast<cudaUserObject_t>(f.new_handle());
  f.user_objects[*object] = user_object_state{ptr, destroy, count};
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaUserObjectRelease(cudaUserObject_t object, unsigned int count) {
  fake& f = state();
  deferred due;
  {
    std::lock_guard guard(f.lock);
    f.count("cudaUserObjectRelease");
    if (f.user_objects.count(object) == 0) return fail(cudaErrorInvalidValue);
    f.release(object, count, due);
  }
  run(due);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count,
                                                unsigned int flags) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cudaGraphRetainUserObject");
  auto g = f.graphs.find(graph);
  auto o = f.user_objects.find(object);
  if (g == f.graphs.end() || o == f.user_objects.end()) return fail(cudaErrorInvalidValue);
  // With cudaGraphUserObjectMove the caller's references become the graph's.
  if ((flags & cudaGraphUserObjectMove) == 0) o->second.count += count;
  g->second.retained.emplace_back(object, count);
  return cudaSuccess;
}

} // extern "C"
