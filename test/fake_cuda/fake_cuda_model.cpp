// The fake CUDA's model (fake_cuda_model.hpp): its one state, and the steps the runtime's and the
// driver's calls share.
#include "fake_cuda_model.hpp"

namespace fake_cuda_model {

fake& state() {
  static fake* f = new fake; // never destroyed: calls may come from static destructors
  return *f;
}

cudaError_t fail(cudaError_t code) {
  if (code != cudaSuccess && code != cudaErrorNotReady) last_error = code;
  return code;
}

void run(const deferred& calls) {
  for (const auto& [fn, data] : calls) fn(data);
}

deferred take_pending(fake& f, stream_state& s) {
  deferred out;
  out.swap(s.pending);
  (void)f;
  return out;
}

cudaError_t create_stream(cudaStream_t* out, unsigned int flags, int priority, void* green) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  if (f.driver_version / 1000 < CUDART_VERSION / 1000) return fail(cudaErrorInsufficientDriver);
  if (f.devices <= 0) return fail(cudaErrorNoDevice);
  if (out == nullptr) return fail(cudaErrorInvalidValue);
  void* handle = f.new_handle();
  stream_state s;
  s.id = f.next_stream_id++;
  s.flags = flags;
  s.priority = priority < -5 ? -5 : (priority > 0 ? 0 : priority);
  s.device = current_device;
  if (green != nullptr) {
    s.green = green;
    s.device = f.greens[green].device;
  }
  f.streams[handle] = s;
  if (f.capture_at_create != fake_cuda_none)
    f.begin(f.streams[handle], f.capture_at_create, cudaStreamCaptureModeGlobal);
  *out = static_cast<cudaStream_t>(handle);
  return cudaSuccess;
}

cudaError_t destroy_stream(const char* name, cudaStream_t stream) {
  fake& f = state();
  deferred due;
  {
    std::lock_guard guard(f.lock);
    f.count(name);
    if (const auto planned = f.fail_next.find(name); planned != f.fail_next.end()) {
      const cudaError_t code = planned->second;
      f.fail_next.erase(planned);
      return fail(code); // refused: the stream lives on
    }
    if (reinterpret_cast<std::uintptr_t>(stream) <= 2) return fail(cudaErrorInvalidResourceHandle);
    stream_state* s = f.find(stream);
    if (s == nullptr) return fail(cudaErrorInvalidResourceHandle);
    due = take_pending(f, *s);
    f.streams.erase(static_cast<void*>(stream));
  }
  run(due);
  return cudaSuccess;
}

cudaError_t query_or_sync(const char* name, cudaStream_t stream, bool sync) {
  fake& f = state();
  deferred due;
  cudaError_t result = cudaSuccess;
  {
    std::lock_guard guard(f.lock);
    f.count(name);
    stream_state* s = f.find(stream);
    if (s == nullptr) return fail(cudaErrorInvalidResourceHandle);
    if (f.unsafe_on(*s, name)) return fail(cudaErrorStreamCaptureUnsupported);
    if (f.prohibited_here(name, interaction_mode)) return fail(cudaErrorStreamCaptureUnsupported);
    due = take_pending(f, *s);
    (void)sync;
  }
  run(due);
  return result;
}

cudaError_t record(const char* name, cudaEvent_t event, cudaStream_t stream) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count(name);
  stream_state* s = f.find(stream);
  auto e = f.events.find(event);
  if (s == nullptr || e == f.events.end()) return fail(cudaErrorInvalidResourceHandle);
  if (s->status == fake_cuda_invalidated) return fail(cudaErrorStreamCaptureInvalidated);
  e->second.capture_id = s->status == fake_cuda_active ? s->capture_id : 0;
  return cudaSuccess;
}

cudaError_t stream_wait_event(const char* name, cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count(name);
  stream_state* s = f.find(stream);
  auto e = f.events.find(event);
  if (s == nullptr || e == f.events.end()) return fail(cudaErrorInvalidResourceHandle);
  const unsigned long long recorded_in = e->second.capture_id;
  if (s->status == fake_cuda_invalidated) {
    f.invalidate(*s, name);
    return fail(cudaErrorStreamCaptureInvalidated);
  }
  if (s->status == fake_cuda_active) {
    if (recorded_in != s->capture_id && (flags & cudaEventWaitExternal) == 0) {
      f.invalidate(*s, std::string(name) + " (an event recorded outside the capture)");
      return fail(cudaErrorStreamCaptureIsolation);
    }
    return cudaSuccess;
  }
  if (recorded_in != 0) {
    // A fork: the stream joins the capture the event was recorded in.
    for (auto& [handle, other] : f.streams) {
      if (other.capture_id == recorded_in && other.status != fake_cuda_none) {
        s->status = other.status;
        s->mode = other.mode;
        s->capture_id = other.capture_id;
        s->graph = other.graph;
        s->capturing_thread = other.capturing_thread;
        break;
      }
    }
  }
  return cudaSuccess;
}

cudaError_t event_query_or_sync(const char* name, cudaEvent_t event) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count(name);
  auto e = f.events.find(event);
  if (e == f.events.end()) return fail(cudaErrorInvalidResourceHandle);
  const cudaError_t refused = f.ask_event(name, e->second, interaction_mode);
  if (refused != cudaSuccess) return fail(refused);
  return e->second.ready ? cudaSuccess : cudaErrorNotReady;
}

int ctx_device(CUcontext ctx) { return static_cast<int>((reinterpret_cast<std::uintptr_t>(ctx) - 0xC0000) / 0x100); }

CUcontext ctx_of_device(int device) {
  return reinterpret_cast<CUcontext>(0xC0000 + static_cast<std::uintptr_t>(device) * 0x100);
}

CUresult to_driver(cudaError_t code) {
  switch (code) {
    case cudaSuccess: return CUDA_SUCCESS;
    case cudaErrorNotReady: return CUDA_ERROR_NOT_READY;
    case cudaErrorInvalidResourceHandle: return CUDA_ERROR_INVALID_HANDLE;
    case cudaErrorStreamCaptureUnsupported: return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    case cudaErrorStreamCaptureInvalidated: return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    case cudaErrorStreamCaptureIsolation: return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    case cudaErrorIllegalState: return CUDA_ERROR_ILLEGAL_STATE;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

} // namespace fake_cuda_model
