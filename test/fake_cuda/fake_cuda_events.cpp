// The fake CUDA's runtime functions: events (what they model: fake_cuda.h).
#include "fake_cuda_model.hpp"

using namespace fake_cuda_model;

extern "C" {

cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t* event) {
  state().count("cudaEventCreate");
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  (void)flags;
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cudaEventCreateWithFlags");
  if (f.devices <= 0) return fail(cudaErrorNoDevice);
  if (event == nullptr) return fail(cudaErrorInvalidValue);
  void* handle = f.new_handle();
  event_state e;
  e.ready = f.events_ready;
  f.events[handle] = e;
  *event = static_cast<cudaEvent_t>(handle);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cudaEventDestroy");
  return f.events.erase(event) == 1 ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}

cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return record("cudaEventRecord", event, stream);
}

cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event) {
  const cudaError_t code = event_query_or_sync("cudaEventQuery", event);
  return code == cudaErrorNotReady ? code : fail(code);
}

cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event) {
  const cudaError_t code = event_query_or_sync("cudaEventSynchronize", event);
  return code == cudaErrorNotReady ? cudaSuccess : fail(code);
}

cudaError_t CUDARTAPI cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cudaEventElapsedTime");
  if (ms == nullptr) return fail(cudaErrorInvalidValue);
  const auto first = f.events.find(start);
  const auto last = f.events.find(end);
  if (first == f.events.end() || last == f.events.end()) return fail(cudaErrorInvalidResourceHandle);
  // Taken to ask both events' completion as cudaEventQuery does (not measured on a GPU).
  for (const auto& e : {first, last}) {
    const cudaError_t refused = f.ask_event("cudaEventElapsedTime", e->second, interaction_mode);
    if (refused != cudaSuccess) return fail(refused);
  }
  *ms = 0.5f;
  return cudaSuccess;
}

} // extern "C"
