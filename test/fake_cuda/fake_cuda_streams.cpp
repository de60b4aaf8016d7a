// The fake CUDA's runtime functions: errors, devices, streams, captures and host functions (what they model: fake_cuda.h).
#include "fake_cuda_model.hpp"

using namespace fake_cuda_model;

extern "C" {

cudaError_t CUDARTAPI cudaGetLastError(void) {
  const cudaError_t code = last_error;
  last_error = cudaSuccess;
  return code;
}

cudaError_t CUDARTAPI cudaPeekAtLastError(void) { return last_error; }

cudaError_t CUDARTAPI cudaGetDeviceCount(int* count) {
  fake& f = state();
  f.count("cudaGetDeviceCount");
  if (f.no_driver()) return fail(cudaErrorInsufficientDriver);
  if (count == nullptr) return fail(cudaErrorInvalidValue);
  *count = f.devices > 0 ? f.devices : 0;
  return f.devices > 0 ? cudaSuccess : fail(cudaErrorNoDevice);
}

cudaError_t CUDARTAPI cudaGetDevice(int* device) {
  fake& f = state();
  f.count("cudaGetDevice");
  if (f.no_driver()) return fail(cudaErrorInsufficientDriver);
  if (f.devices <= 0) return fail(cudaErrorNoDevice);
  if (device == nullptr) return fail(cudaErrorInvalidValue);
  *device = current_device;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaSetDevice(int device) {
  fake& f = state();
  f.count("cudaSetDevice");
  if (f.no_driver()) return fail(cudaErrorInsufficientDriver);
  if (device < 0 || device >= f.devices) return fail(cudaErrorInvalidDevice);
  current_device = device;
  return cudaSuccess;
}

// What a program asks at start (a device check, its name and versions): answered, not modelled.
cudaError_t CUDARTAPI cudaFree(void* pointer) {
  fake& f = state();
  f.count("cudaFree");
  if (f.devices <= 0) return fail(cudaErrorNoDevice);
  return pointer == nullptr ? cudaSuccess : fail(cudaErrorInvalidValue);
}

cudaError_t CUDARTAPI cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  fake& f = state();
  f.count("cudaGetDeviceProperties");
  if (prop == nullptr || device < 0 || device >= f.devices) return fail(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "streamlike fake CUDA device %d", device);
  prop->major = 9;
  prop->minor = 0;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDriverGetVersion(int* version) {
  if (version != nullptr) *version = state().driver_version;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaRuntimeGetVersion(int* version) {
  if (version != nullptr) *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceSynchronize(void) {
  fake& f = state();
  deferred due;
  {
    std::lock_guard guard(f.lock);
    f.count("cudaDeviceSynchronize");
    // Synchronizing the device encompasses every capture on it: each is invalidated, in every mode.
    bool capturing = false;
    for (auto& [handle, s] : f.streams) {
      if (s.status == fake_cuda_none) continue;
      capturing = true;
      if (s.status == fake_cuda_active) f.invalidate_capture(s, "cudaDeviceSynchronize");
    }
    if (capturing) return fail(cudaErrorStreamCaptureUnsupported);
    for (auto& [handle, s] : f.streams) {
      deferred some = take_pending(f, s);
      due.insert(due.end(), some.begin(), some.end());
    }
  }
  run(due);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  fake& f = state();
  f.count("cudaDeviceGetStreamPriorityRange");
  if (f.devices <= 0) return fail(cudaErrorNoDevice);
  if (least != nullptr) *least = 0;
  if (greatest != nullptr) *greatest = -5;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion(const char* symbol, void** fn, unsigned int version,
                                                       unsigned long long flags,
                                                       cudaDriverEntryPointQueryResult* status) {
  (void)flags;
  fake& f = state();
  f.count("cudaGetDriverEntryPointByVersion");
  if (f.no_driver()) { // no libcuda.so.1 to look in
    if (fn != nullptr) *fn = nullptr;
    return fail(cudaErrorInsufficientDriver);
  }
  void* found = symbol == nullptr ? nullptr : driver_function(symbol, version);
  if (fn != nullptr) *fn = found;
  if (status != nullptr) *status = found ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
  if (found == nullptr && symbol != nullptr) f.count((std::string("entry point not faked: ") + symbol).c_str());
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t* stream) {
  state().count("cudaStreamCreate");
  return create_stream(stream, cudaStreamDefault, 0);
}

cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  state().count("cudaStreamCreateWithFlags");
  return create_stream(stream, flags, 0);
}

cudaError_t CUDARTAPI cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) {
  state().count("cudaStreamCreateWithPriority");
  return create_stream(stream, flags, priority);
}

cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream) { return destroy_stream("cudaStreamDestroy", stream); }

cudaError_t CUDARTAPI cudaStreamGetId(cudaStream_t stream, unsigned long long* id) {
  return invalidating_get("cudaStreamGetId", stream, id, &stream_state::id);
}

cudaError_t CUDARTAPI cudaStreamGetFlags(cudaStream_t stream, unsigned int* flags) {
  return invalidating_get("cudaStreamGetFlags", stream, flags, &stream_state::flags);
}

cudaError_t CUDARTAPI cudaStreamGetDevice(cudaStream_t stream, int* device) {
  return invalidating_get("cudaStreamGetDevice", stream, device, &stream_state::device);
}

cudaError_t CUDARTAPI cudaStreamGetPriority(cudaStream_t stream, int* priority) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cudaStreamGetPriority");
  stream_state* s = f.find(stream);
  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (priority == nullptr) return fail(cudaErrorInvalidValue);
  *priority = s->priority;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream) { return query_or_sync("cudaStreamQuery", stream, false); }

cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream) {
  return query_or_sync("cudaStreamSynchronize", stream, true);
}

cudaError_t CUDARTAPI cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cudaStreamIsCapturing");
  stream_state* s = f.find(stream);
  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (status == nullptr) return fail(cudaErrorInvalidValue);
  *status = static_cast<cudaStreamCaptureStatus>(s->status);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                               unsigned long long* id, cudaGraph_t* graph,
                                               const cudaGraphNode_t** dependencies, const cudaGraphEdgeData** edges,
                                               size_t* dependency_count) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cudaStreamGetCaptureInfo");
  stream_state* s = f.find(stream);
  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (status == nullptr) return fail(cudaErrorInvalidValue);
  *status = static_cast<cudaStreamCaptureStatus>(s->status);
  const bool capturing = s->status != fake_cuda_none;
  if (id != nullptr) *id = capturing ? s->capture_id : 0;
  if (graph != nullptr) *graph = capturing ? s->graph : nullptr;
  if (dependencies != nullptr) *dependencies = nullptr;
  if (edges != nullptr) *edges = nullptr;
  if (dependency_count != nullptr) *dependency_count = 0;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  state().count("cudaThreadExchangeStreamCaptureMode");
  if (mode == nullptr) return fail(cudaErrorInvalidValue);
  const int previous = interaction_mode;
  interaction_mode = static_cast<int>(*mode);
  *mode = static_cast<cudaStreamCaptureMode>(previous);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cudaStreamBeginCapture");
  stream_state* s = f.find(stream);
  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (f.unsafe_on(*s, "cudaStreamBeginCapture")) return fail(cudaErrorIllegalState);
  if (stream == nullptr || stream == cudaStreamLegacy) return fail(cudaErrorStreamCaptureUnsupported);
  f.begin(*s, fake_cuda_active, mode);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  fake& f = state();
  deferred due;
  cudaError_t result = cudaSuccess;
  {
    std::lock_guard guard(f.lock);
    f.count("cudaStreamEndCapture");
    stream_state* s = f.find(stream);
    if (s == nullptr) return fail(cudaErrorInvalidResourceHandle);
    if (graph != nullptr) *graph = nullptr;
    if (s->status == fake_cuda_none) return fail(cudaErrorIllegalState);
    const cudaGraph_t built = s->graph;
    const bool invalidated = s->status == fake_cuda_invalidated;
    f.end_capture(s->capture_id);
    if (invalidated) {
      f.destroy_graph(built, due);
      result = cudaErrorStreamCaptureInvalidated;
    } else if (graph != nullptr) {
      *graph = built;
    } else {
      f.destroy_graph(built, due);
    }
  }
  run(due);
  return fail(result);
}

cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return stream_wait_event("cudaStreamWaitEvent", stream, event, flags);
}

cudaError_t CUDARTAPI cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* data) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cudaLaunchHostFunc");
  stream_state* s = f.find(stream);
  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (s->status == fake_cuda_invalidated) return fail(cudaErrorStreamCaptureInvalidated);
  if (s->status == fake_cuda_active) {
    ++f.graphs[s->graph].nodes; // a host node: it runs when the graph is launched
    return cudaSuccess;
  }
  s->pending.emplace_back(fn, data); // runs at the stream's next query or synchronize
  return cudaSuccess;
}

} // extern "C"
