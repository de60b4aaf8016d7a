// A CUDA runtime and driver made of bookkeeping: what it models and how to use it is in
// fake_cuda.h. Every function takes one lock; host functions and user-object destructors are
// called with it released (they may queue work for a thread that calls back in).
#include "fake_cuda.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

struct stream_state {
  unsigned long long id = 0;
  unsigned int flags = 0;
  int priority = 0;
  int device = 0;
  int status = fake_cuda_none; // fake_cuda_capture_status
  int mode = cudaStreamCaptureModeGlobal;
  unsigned long long capture_id = 0;
  cudaGraph_t graph = nullptr; // the graph the capture builds (owned by the capture)
  std::thread::id capturing_thread;
  std::vector<std::pair<cudaHostFn_t, void*>> pending; // host functions not run yet
  void* green = nullptr;                               // the green context it was made in
};

// A green context: SMs of a device, and the CUcontext that cuCtxFromGreenCtx answers for it.
struct green_state {
  int device = 0;
  unsigned int sm_count = 0;
  void* context = nullptr;
  unsigned long long context_id = 0;
};

struct event_state {
  unsigned long long capture_id = 0; // where it was last recorded: 0 outside any capture
  bool ready = true;
};

struct user_object_state {
  void* ptr = nullptr;
  cudaHostFn_t destroy = nullptr;
  unsigned int count = 0;
};

struct graph_state {
  std::size_t nodes = 0;
  std::vector<std::pair<cudaUserObject_t, unsigned int>> retained; // references the graph holds
};

using deferred = std::vector<std::pair<cudaHostFn_t, void*>>;

struct fake {
  std::mutex lock;       // everything but the counts
  std::mutex calls_lock; // the counts (taken after `lock` where both are)
  std::uintptr_t next_handle = 0x51000;
  unsigned long long next_stream_id = 100;
  unsigned long long next_capture_id = 1;
  std::map<void*, stream_state> streams;
  std::map<void*, event_state> events;
  std::map<void*, graph_state> graphs;
  std::map<void*, std::vector<std::pair<cudaUserObject_t, unsigned int>>> execs;
  std::map<void*, user_object_state> user_objects;
  std::map<std::string, long> calls;
  std::map<std::string, cudaError_t> fail_next; // fake_cuda_fail_next
  std::vector<std::string> invalidations;
  int devices = 1;
  unsigned int sms = 132;                    // each device's SM count (an H200's)
  bool green_contexts = true;                // false: the driver functions of green contexts are missing
  std::map<void*, green_state> greens;       // by green context handle
  std::map<void*, void*> green_of_context;   // CUcontext of a green context -> the green context
  std::map<void*, unsigned int> descriptors; // cuDevResourceGenerateDesc: the SM count described
  unsigned long long next_context_id = 5000;
  long orphaned_green_streams = 0; // streams whose green context was destroyed under them
  int capture_at_create = fake_cuda_none;
  bool events_ready = true;
  std::FILE* log = nullptr;
  // The CUDA version the driver supports. One of an older major than the runtime's, as a real
  // driver does, refuses stream creation with cudaErrorInsufficientDriver.
  int driver_version = CUDART_VERSION;

  fake() {
    if (const char* n = std::getenv("STREAMLIKE_FAKE_CUDA_DEVICES")) devices = std::atoi(n);
    if (const char* n = std::getenv("STREAMLIKE_FAKE_CUDA_SMS")) sms = static_cast<unsigned int>(std::atoi(n));
    if (const char* g = std::getenv("STREAMLIKE_FAKE_CUDA_GREEN_CONTEXTS")) green_contexts = std::strcmp(g, "0") != 0;
    if (const char* c = std::getenv("STREAMLIKE_FAKE_CUDA_CAPTURE")) {
      if (std::strcmp(c, "active") == 0) capture_at_create = fake_cuda_active;
      if (std::strcmp(c, "invalidated") == 0) capture_at_create = fake_cuda_invalidated;
    }
    if (const char* e = std::getenv("STREAMLIKE_FAKE_CUDA_EVENTS")) events_ready = std::strcmp(e, "not_ready") != 0;
    if (const char* path = std::getenv("STREAMLIKE_FAKE_CUDA_LOG")) log = std::fopen(path, "a");
    if (const char* v = std::getenv("STREAMLIKE_FAKE_CUDA_DRIVER_VERSION")) driver_version = std::atoi(v);
    // The default streams exist from the start, on device 0.
    for (std::uintptr_t h : {std::uintptr_t{0}, std::uintptr_t{1}, std::uintptr_t{2}}) {
      stream_state s;
      s.id = h + 1;
      streams[reinterpret_cast<void*>(h)] = s;
    }
  }

  void* new_handle() {
    next_handle += 0x100;
    return reinterpret_cast<void*>(next_handle);
  }

  void count(const char* name) {
    std::lock_guard guard(calls_lock);
    ++calls[name];
    if (log != nullptr) {
      std::fprintf(log, "%s\n", name);
      std::fflush(log);
    }
  }

  void invalidate(stream_state& s, const std::string& name) {
    s.status = fake_cuda_invalidated;
    invalidations.push_back(name);
    if (log != nullptr) {
      std::fprintf(log, "INVALIDATED %s\n", name.c_str());
      std::fflush(log);
    }
  }

  stream_state* find(cudaStream_t stream) {
    auto it = streams.find(static_cast<void*>(stream));
    return it == streams.end() ? nullptr : &it->second;
  }

  // Invalidates every stream of the capture `s` is in (its origin and the streams forked into it),
  // recording the call once.
  void invalidate_capture(stream_state& s, const std::string& name) {
    const unsigned long long id = s.capture_id;
    for (auto& [handle, other] : streams) {
      if (&other != &s && id != 0 && other.capture_id == id) other.status = fake_cuda_invalidated;
    }
    invalidate(s, name);
  }

  // A potentially unsafe call (cudaEventQuery, cudaStreamSynchronize of a stream outside any
  // capture, ...), judged by CUDA's rule for the calling thread's interaction mode
  // (cuThreadExchangeStreamCaptureMode): relaxed, never prohibited; thread-local, prohibited while
  // this thread has a global or thread-local capture under way; global, that or while any thread has
  // a global one. A prohibited call invalidates each capture that prohibits it, and fails. True if
  // prohibited.
  bool prohibited_here(const char* name, int thread_mode) {
    if (thread_mode == cudaStreamCaptureModeRelaxed) return false;
    bool prohibited = false;
    std::vector<unsigned long long> done;
    for (auto& [handle, s] : streams) {
      if (s.status == fake_cuda_none || s.mode == cudaStreamCaptureModeRelaxed) continue;
      const bool own = s.capturing_thread == std::this_thread::get_id();
      const bool objects = own || (thread_mode == cudaStreamCaptureModeGlobal && s.mode == cudaStreamCaptureModeGlobal);
      if (!objects) continue;
      prohibited = true;
      if (std::find(done.begin(), done.end(), s.capture_id) != done.end()) continue;
      done.push_back(s.capture_id);
      invalidate_capture(s, std::string(name) + " (prohibited while a capture runs)");
    }
    return prohibited;
  }

  // A call that invalidates the capture of the stream it is made on, in every mode. True if the
  // stream captures (the call then fails).
  bool unsafe_on(stream_state& s, const char* name) {
    if (s.status == fake_cuda_none) return false;
    invalidate_capture(s, name);
    return true;
  }

  // The capture `id` is still under way (some stream is in it).
  bool capture_running(unsigned long long id) const {
    for (const auto& [handle, s] : streams) {
      if (id != 0 && s.capture_id == id && s.status != fake_cuda_none) return true;
    }
    return false;
  }

  // A call that asks an event's completion (query, synchronize, elapsed time). An event last
  // recorded in a capture marks a point of the graph: while the capture runs the call invalidates it
  // in every mode (CUDA answers cudaErrorCapturedEvent); after it CUDA refuses the call
  // (cudaErrorInvalidValue, as CUDA 13 does). Otherwise the call is potentially unsafe.
  cudaError_t ask_event(const char* name, const event_state& e, int thread_mode) {
    if (e.capture_id != 0) {
      for (auto& [handle, s] : streams) {
        if (s.capture_id == e.capture_id && s.status != fake_cuda_none) {
          invalidate_capture(s, std::string(name) + " (an event recorded in the capture)");
          return cudaErrorCapturedEvent;
        }
      }
      return cudaErrorInvalidValue;
    }
    if (prohibited_here(name, thread_mode)) return cudaErrorStreamCaptureUnsupported;
    return cudaSuccess;
  }

  // Ends every stream of capture `id` (its origin and the streams it forked into).
  void end_capture(unsigned long long id) {
    for (auto& [handle, s] : streams) {
      if (s.capture_id == id) {
        s.status = fake_cuda_none;
        s.capture_id = 0;
        s.graph = nullptr;
      }
    }
  }

  void begin(stream_state& s, int status, int mode) {
    s.status = status;
    s.mode = mode;
    s.capture_id = next_capture_id++;
    s.capturing_thread = std::this_thread::get_id();
    s.graph = static_cast<cudaGraph_t>(new_handle());
    graphs[s.graph] = graph_state{};
  }

  // Releases `count` references of a user object; its destructor joins `out` when none remain.
  void release(cudaUserObject_t object, unsigned int count, deferred& out) {
    auto it = user_objects.find(object);
    if (it == user_objects.end()) return;
    it->second.count = it->second.count > count ? it->second.count - count : 0;
    if (it->second.count == 0) {
      out.emplace_back(it->second.destroy, it->second.ptr);
      user_objects.erase(it);
    }
  }

  void destroy_graph(cudaGraph_t graph, deferred& out) {
    auto it = graphs.find(graph);
    if (it == graphs.end()) return;
    const auto retained = it->second.retained;
    graphs.erase(it);
    for (const auto& [object, count] : retained) release(object, count, out);
  }
};

fake& state() {
  static fake* f = new fake; // never destroyed: calls may come from static destructors
  return *f;
}

thread_local cudaError_t last_error = cudaSuccess;
thread_local int current_device = 0;
// The calling thread's capture interaction mode (cuThreadExchangeStreamCaptureMode); CUDA's
// default is global.
thread_local int interaction_mode = cudaStreamCaptureModeGlobal;

cudaError_t fail(cudaError_t code) {
  if (code != cudaSuccess && code != cudaErrorNotReady) last_error = code;
  return code;
}

void run(const deferred& calls) {
  for (const auto& [fn, data] : calls) fn(data);
}

// Runs (with the lock released) the host functions queued on `stream`, as CUDA would once the
// stream's earlier work is done.
deferred take_pending(fake& f, stream_state& s) {
  deferred out;
  out.swap(s.pending);
  (void)f;
  return out;
}

cudaError_t create_stream(cudaStream_t* out, unsigned int flags, int priority, void* green = nullptr) {
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

// The destroy of a stream (the runtime's or the driver's, counted as `name`).
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

// The query or synchronize of a stream: invalidating on a capturing stream, unsafe for global
// captures otherwise; runs the stream's host functions.
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

// A stream getter that CUDA lets invalidate a capture.
template <class T>
cudaError_t invalidating_get(const char* name, cudaStream_t stream, T* out, T stream_state::*field) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count(name);
  stream_state* s = f.find(stream);
  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (f.unsafe_on(*s, name)) return fail(cudaErrorStreamCaptureUnsupported);
  if (out == nullptr) return fail(cudaErrorInvalidValue);
  *out = s->*field;
  return cudaSuccess;
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

// --- the driver's functions, handed out by cudaGetDriverEntryPointByVersion -------------------

CUresult CUDAAPI fake_cuStreamGetCtx(CUstream stream, CUcontext* ctx) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cuStreamGetCtx");
  stream_state* s = f.find(stream);
  if (s == nullptr || ctx == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  const bool default_stream = reinterpret_cast<std::uintptr_t>(stream) <= 2;
  *ctx = s->green != nullptr ? static_cast<CUcontext>(f.greens[s->green].context)
                             : ctx_of_device(default_stream ? current_device : s->device);
  return CUDA_SUCCESS;
}

// The green context whose CUcontext `ctx` is, else null (a device's primary context).
const green_state* green_of(fake& f, CUcontext ctx) {
  auto it = f.green_of_context.find(ctx);
  return it == f.green_of_context.end() ? nullptr : &f.greens[it->second];
}

CUresult CUDAAPI fake_cuCtxGetId(CUcontext ctx, unsigned long long* id) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cuCtxGetId");
  if (id == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const green_state* g = green_of(f, ctx);
  *id = g != nullptr ? g->context_id : 1000 + static_cast<unsigned long long>(ctx_device(ctx));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cuCtxGetDevice");
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const green_state* g = ctx == nullptr ? nullptr : green_of(f, ctx);
  *device = ctx == nullptr ? current_device : (g != nullptr ? g->device : ctx_device(ctx));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuCtxGetDevice(CUdevice* device) { return fake_cuCtxGetDevice_v2(device, nullptr); }

CUresult CUDAAPI fake_cuDevicePrimaryCtxGetState(CUdevice device, unsigned int* flags, int* active) {
  state().count("cuDevicePrimaryCtxGetState");
  if (device < 0 || device >= state().devices) return CUDA_ERROR_INVALID_DEVICE;
  *flags = 0;
  *active = 1;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device) {
  state().count("cuDevicePrimaryCtxRetain");
  if (device < 0 || device >= state().devices) return CUDA_ERROR_INVALID_DEVICE;
  *ctx = ctx_of_device(device);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuDevicePrimaryCtxRelease(CUdevice device) {
  state().count("cuDevicePrimaryCtxRelease");
  return device < 0 || device >= state().devices ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cuStreamIsCapturing");
  stream_state* s = f.find(stream);
  if (s == nullptr || status == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  *status = static_cast<CUstreamCaptureStatus>(s->status);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuEventRecord(CUevent event, CUstream stream) {
  return to_driver(record("cuEventRecord", event, stream));
}

CUresult CUDAAPI fake_cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  return to_driver(stream_wait_event("cuStreamWaitEvent", stream, event, flags));
}

CUresult CUDAAPI fake_cuStreamGetId(CUstream stream, unsigned long long* id) {
  return to_driver(invalidating_get("cuStreamGetId", stream, id, &stream_state::id));
}

CUresult CUDAAPI fake_cuStreamGetFlags(CUstream stream, unsigned int* flags) {
  return to_driver(invalidating_get("cuStreamGetFlags", stream, flags, &stream_state::flags));
}

CUresult CUDAAPI fake_cuStreamGetDevice(CUstream stream, CUdevice* device) {
  return to_driver(invalidating_get("cuStreamGetDevice", stream, device, &stream_state::device));
}

CUresult CUDAAPI fake_cuStreamQuery(CUstream stream) {
  return to_driver(query_or_sync("cuStreamQuery", stream, false));
}

CUresult CUDAAPI fake_cuStreamSynchronize(CUstream stream) {
  return to_driver(query_or_sync("cuStreamSynchronize", stream, true));
}

CUresult CUDAAPI fake_cuEventQuery(CUevent event) { return to_driver(event_query_or_sync("cuEventQuery", event)); }

CUresult CUDAAPI fake_cuEventSynchronize(CUevent event) {
  return to_driver(event_query_or_sync("cuEventSynchronize", event));
}

CUresult CUDAAPI fake_cuStreamCreate(CUstream* stream, unsigned int flags) {
  state().count("cuStreamCreate");
  return to_driver(create_stream(stream, flags, 0));
}

CUresult CUDAAPI fake_cuStreamCreateWithPriority(CUstream* stream, unsigned int flags, int priority) {
  state().count("cuStreamCreateWithPriority");
  return to_driver(create_stream(stream, flags, priority));
}

CUresult CUDAAPI fake_cuStreamDestroy(CUstream stream) { return to_driver(destroy_stream("cuStreamDestroy", stream)); }

CUresult CUDAAPI fake_cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
  state().count("cuThreadExchangeStreamCaptureMode");
  if (mode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const int previous = interaction_mode;
  interaction_mode = static_cast<int>(*mode);
  *mode = static_cast<CUstreamCaptureMode>(previous);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuCtxGetCurrent(CUcontext* ctx) {
  fake& f = state();
  f.count("cuCtxGetCurrent");
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *ctx = f.devices > 0 ? ctx_of_device(current_device) : nullptr;
  return CUDA_SUCCESS;
}

// --- green contexts: a device's SMs split by count, as an H200 does (minimum 8 SMs, multiples of 8),
// descriptors, green contexts, and streams that remember theirs.

constexpr unsigned int sm_granularity = 8;

// An SM resource of `count` SMs (the fake reads only type and sm.smCount back).
void fill_sms(CUdevResource* resource, unsigned int count) {
  *resource = CUdevResource{};
  resource->type = CU_DEV_RESOURCE_TYPE_SM;
  resource->sm.smCount = count;
  resource->sm.minSmPartitionSize = sm_granularity;
  resource->sm.smCoscheduledAlignment = sm_granularity;
}

CUresult CUDAAPI fake_cuDeviceGetDevResource(CUdevice device, CUdevResource* resource, CUdevResourceType type) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cuDeviceGetDevResource");
  if (device < 0 || device >= f.devices) return CUDA_ERROR_INVALID_DEVICE;
  if (resource == nullptr || type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_VALUE;
  fill_sms(resource, f.sms);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuCtxGetDevResource(CUcontext ctx, CUdevResource* resource, CUdevResourceType type) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cuCtxGetDevResource");
  if (resource == nullptr || type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_VALUE;
  const green_state* g = green_of(f, ctx);
  fill_sms(resource, g != nullptr ? g->sm_count : f.sms);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuGreenCtxGetDevResource(CUgreenCtx green, CUdevResource* resource, CUdevResourceType type) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cuGreenCtxGetDevResource");
  auto it = f.greens.find(green);
  if (it == f.greens.end()) return CUDA_ERROR_INVALID_HANDLE;
  if (resource == nullptr || type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_VALUE;
  fill_sms(resource, it->second.sm_count);
  return CUDA_SUCCESS;
}

// Groups of minCount SMs rounded up to the granularity, as many as fit (and as asked); the rest in
// `remaining`. No group fits: CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION.
CUresult CUDAAPI fake_cuDevSmResourceSplitByCount(CUdevResource* result, unsigned int* groups,
                                                  const CUdevResource* input, CUdevResource* remaining,
                                                  unsigned int flags, unsigned int min_count) {
  (void)flags;
  state().count("cuDevSmResourceSplitByCount");
  if (groups == nullptr || input == nullptr || input->type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_VALUE;
  const unsigned int total = input->sm.smCount;
  if (min_count > total) return CUDA_ERROR_INVALID_VALUE;
  const unsigned int size =
      min_count <= sm_granularity ? sm_granularity : (min_count + sm_granularity - 1) / sm_granularity * sm_granularity;
  const unsigned int fit = total / size;
  if (fit == 0) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  if (result == nullptr) {
    *groups = fit;
    return CUDA_SUCCESS;
  }
  const unsigned int made = *groups < fit ? *groups : fit;
  for (unsigned int i = 0; i < made; ++i) fill_sms(&result[i], size);
  if (remaining != nullptr) fill_sms(remaining, total - made * size);
  *groups = made;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuDevResourceGenerateDesc(CUdevResourceDesc* desc, CUdevResource* resources, unsigned int count) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cuDevResourceGenerateDesc");
  if (desc == nullptr || resources == nullptr || count != 1 || resources[0].type != CU_DEV_RESOURCE_TYPE_SM)
    return CUDA_ERROR_INVALID_VALUE;
  void* handle = f.new_handle();
  f.descriptors[handle] = resources[0].sm.smCount;
  *desc = static_cast<CUdevResourceDesc>(handle);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuGreenCtxCreate(CUgreenCtx* green, CUdevResourceDesc desc, CUdevice device, unsigned int flags) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cuGreenCtxCreate");
  if (device < 0 || device >= f.devices) return CUDA_ERROR_INVALID_DEVICE;
  auto d = f.descriptors.find(desc);
  if (green == nullptr || d == f.descriptors.end() || (flags & CU_GREEN_CTX_DEFAULT_STREAM) == 0)
    return CUDA_ERROR_INVALID_VALUE;
  void* handle = f.new_handle();
  green_state g;
  g.device = device;
  g.sm_count = d->second;
  g.context = f.new_handle();
  g.context_id = f.next_context_id++;
  f.greens[handle] = g;
  f.green_of_context[g.context] = handle;
  *green = static_cast<CUgreenCtx>(handle);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuGreenCtxDestroy(CUgreenCtx green) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cuGreenCtxDestroy");
  auto it = f.greens.find(green);
  if (it == f.greens.end()) return CUDA_ERROR_INVALID_HANDLE;
  // CUDA leaves the green context's streams alive (leaked); the fake counts them, so that a test
  // sees a green context destroyed under its streams (fake_cuda_orphaned_green_streams).
  for (const auto& [handle, s] : f.streams) {
    if (s.green == green) ++f.orphaned_green_streams;
  }
  f.green_of_context.erase(it->second.context);
  f.greens.erase(it);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuCtxFromGreenCtx(CUcontext* ctx, CUgreenCtx green) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cuCtxFromGreenCtx");
  auto it = f.greens.find(green);
  if (ctx == nullptr || it == f.greens.end()) return CUDA_ERROR_INVALID_HANDLE;
  *ctx = static_cast<CUcontext>(it->second.context);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuGreenCtxStreamCreate(CUstream* stream, CUgreenCtx green, unsigned int flags, int priority) {
  {
    fake& f = state();
    std::lock_guard guard(f.lock);
    f.count("cuGreenCtxStreamCreate");
    if (f.greens.count(green) == 0) return CUDA_ERROR_INVALID_HANDLE;
    if ((flags & CU_STREAM_NON_BLOCKING) == 0) return CUDA_ERROR_INVALID_VALUE; // required by CUDA
  }
  return to_driver(create_stream(stream, flags, priority, green));
}

// A green stream's green context; null for a plain stream and for a default stream (no green
// context is ever current in the fake).
CUresult CUDAAPI fake_cuStreamGetGreenCtx(CUstream stream, CUgreenCtx* green) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cuStreamGetGreenCtx");
  stream_state* s = f.find(stream);
  if (s == nullptr || green == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  *green = static_cast<CUgreenCtx>(s->green);
  return CUDA_SUCCESS;
}

// cuStreamGetCtx as of CUDA 12.5 (cuStreamGetCtx_v2): both contexts in one call. A green stream's
// green context, with its device's primary context beside it; a plain stream's context and no
// green context.
CUresult CUDAAPI fake_cuStreamGetCtx_v2(CUstream stream, CUcontext* ctx, CUgreenCtx* green) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.count("cuStreamGetCtx_v2");
  stream_state* s = f.find(stream);
  if (s == nullptr || ctx == nullptr || green == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  const bool default_stream = reinterpret_cast<std::uintptr_t>(stream) <= 2;
  *green = static_cast<CUgreenCtx>(s->green);
  *ctx = ctx_of_device(default_stream ? current_device : s->device);
  return CUDA_SUCCESS;
}

void* driver_function(const std::string& name, unsigned int version) {
  static const std::map<std::string, void*> functions = {
      {"cuStreamGetCtx", reinterpret_cast<void*>(&fake_cuStreamGetCtx)},
      {"cuCtxGetId", reinterpret_cast<void*>(&fake_cuCtxGetId)},
      {"cuDevicePrimaryCtxGetState", reinterpret_cast<void*>(&fake_cuDevicePrimaryCtxGetState)},
      {"cuDevicePrimaryCtxRetain", reinterpret_cast<void*>(&fake_cuDevicePrimaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease", reinterpret_cast<void*>(&fake_cuDevicePrimaryCtxRelease)},
      {"cuStreamIsCapturing", reinterpret_cast<void*>(&fake_cuStreamIsCapturing)},
      {"cuEventRecord", reinterpret_cast<void*>(&fake_cuEventRecord)},
      {"cuStreamWaitEvent", reinterpret_cast<void*>(&fake_cuStreamWaitEvent)},
      {"cuStreamGetId", reinterpret_cast<void*>(&fake_cuStreamGetId)},
      {"cuStreamGetFlags", reinterpret_cast<void*>(&fake_cuStreamGetFlags)},
      {"cuStreamGetDevice", reinterpret_cast<void*>(&fake_cuStreamGetDevice)},
      {"cuStreamQuery", reinterpret_cast<void*>(&fake_cuStreamQuery)},
      {"cuStreamSynchronize", reinterpret_cast<void*>(&fake_cuStreamSynchronize)},
      {"cuEventQuery", reinterpret_cast<void*>(&fake_cuEventQuery)},
      {"cuEventSynchronize", reinterpret_cast<void*>(&fake_cuEventSynchronize)},
      {"cuStreamCreate", reinterpret_cast<void*>(&fake_cuStreamCreate)},
      {"cuStreamCreateWithPriority", reinterpret_cast<void*>(&fake_cuStreamCreateWithPriority)},
      {"cuStreamDestroy", reinterpret_cast<void*>(&fake_cuStreamDestroy)},
      {"cuCtxGetCurrent", reinterpret_cast<void*>(&fake_cuCtxGetCurrent)},
      {"cuThreadExchangeStreamCaptureMode", reinterpret_cast<void*>(&fake_cuThreadExchangeStreamCaptureMode)},
      {"cuDeviceGetDevResource", reinterpret_cast<void*>(&fake_cuDeviceGetDevResource)},
      {"cuCtxGetDevResource", reinterpret_cast<void*>(&fake_cuCtxGetDevResource)},
      {"cuGreenCtxGetDevResource", reinterpret_cast<void*>(&fake_cuGreenCtxGetDevResource)},
      {"cuDevSmResourceSplitByCount", reinterpret_cast<void*>(&fake_cuDevSmResourceSplitByCount)},
      {"cuDevResourceGenerateDesc", reinterpret_cast<void*>(&fake_cuDevResourceGenerateDesc)},
      {"cuGreenCtxCreate", reinterpret_cast<void*>(&fake_cuGreenCtxCreate)},
      {"cuGreenCtxDestroy", reinterpret_cast<void*>(&fake_cuGreenCtxDestroy)},
      {"cuCtxFromGreenCtx", reinterpret_cast<void*>(&fake_cuCtxFromGreenCtx)},
      {"cuGreenCtxStreamCreate", reinterpret_cast<void*>(&fake_cuGreenCtxStreamCreate)},
      {"cuStreamGetGreenCtx", reinterpret_cast<void*>(&fake_cuStreamGetGreenCtx)},
  };
  // cuCtxGetDevice names the context from CUDA 13; before, it answers for the current context.
  if (name == "cuCtxGetDevice")
    return version >= 13000 ? reinterpret_cast<void*>(&fake_cuCtxGetDevice_v2)
                            : reinterpret_cast<void*>(&fake_cuCtxGetDevice);
  // cuStreamGetCtx names the green context too from CUDA 12.5, in a driver that has them.
  if (name == "cuStreamGetCtx" && version >= 12050 && state().green_contexts)
    return reinterpret_cast<void*>(&fake_cuStreamGetCtx_v2);
  // A driver without green contexts lacks their functions (and the resource queries with them).
  static const char* const green_functions[] = {
      "cuDeviceGetDevResource",    "cuCtxGetDevResource", "cuGreenCtxGetDevResource", "cuDevSmResourceSplitByCount",
      "cuDevResourceGenerateDesc", "cuGreenCtxCreate",    "cuGreenCtxDestroy",        "cuCtxFromGreenCtx",
      "cuGreenCtxStreamCreate",    "cuStreamGetGreenCtx"};
  if (!state().green_contexts) {
    for (const char* green : green_functions) {
      if (name == green) return nullptr;
    }
  }
  auto it = functions.find(name);
  return it == functions.end() ? nullptr : it->second;
}

} // namespace

// --- the control API (fake_cuda.h) ------------------------------------------------------------

extern "C" {

int fake_cuda_present(void) { return 1; }

void fake_cuda_reset_log(void) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  std::lock_guard counts_guard(f.calls_lock);
  f.calls.clear();
  f.invalidations.clear();
}

int fake_cuda_set_capture(void* stream, int status, int mode) {
  fake& f = state();
  deferred due;
  {
    std::lock_guard guard(f.lock);
    stream_state* s = f.find(static_cast<cudaStream_t>(stream));
    if (s == nullptr) return -1;
    if (status == fake_cuda_none) {
      // Out of the capture; the last stream out ends it and its graph (as an end without a graph).
      const unsigned long long id = s->capture_id;
      const cudaGraph_t graph = s->graph;
      s->status = fake_cuda_none;
      s->capture_id = 0;
      s->graph = nullptr;
      bool others = false;
      for (const auto& [handle, other] : f.streams) others = others || (id != 0 && other.capture_id == id);
      if (!others && graph != nullptr) f.destroy_graph(graph, due);
    } else if (s->status == fake_cuda_none) {
      f.begin(*s, status, mode);
    } else {
      s->status = status;
      s->mode = mode;
    }
  }
  run(due);
  return 0;
}

int fake_cuda_fail_next(const char* name, int code) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  if (name == nullptr || (std::strcmp(name, "cudaStreamDestroy") != 0 && std::strcmp(name, "cuStreamDestroy") != 0))
    return -1;
  f.fail_next[name] = static_cast<cudaError_t>(code);
  return 0;
}

int fake_cuda_thread_capture_mode(void) { return interaction_mode; }

int fake_cuda_capture_status(void* stream) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  const stream_state* s = f.find(static_cast<cudaStream_t>(stream));
  return s == nullptr ? -1 : s->status;
}

long fake_cuda_calls(const char* name) {
  fake& f = state();
  std::lock_guard guard(f.calls_lock);
  auto it = f.calls.find(name);
  return it == f.calls.end() ? 0 : it->second;
}

const char* fake_cuda_called(size_t i) {
  fake& f = state();
  std::lock_guard guard(f.calls_lock);
  if (i >= f.calls.size()) return nullptr;
  auto it = f.calls.begin();
  std::advance(it, static_cast<std::ptrdiff_t>(i));
  return it->first.c_str(); // stable until the next reset
}

void fake_cuda_set_devices(int n) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.devices = n;
}

size_t fake_cuda_invalidations(void) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  return f.invalidations.size();
}

const char* fake_cuda_invalidation(size_t i) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  return i < f.invalidations.size() ? f.invalidations[i].c_str() : nullptr;
}

long fake_cuda_live_streams(void) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  return static_cast<long>(f.streams.size()) - 3; // less the three default streams
}

long fake_cuda_live_events(void) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  return static_cast<long>(f.events.size());
}

long fake_cuda_live_green_contexts(void) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  return static_cast<long>(f.greens.size());
}

long fake_cuda_orphaned_green_streams(void) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  return f.orphaned_green_streams;
}

void* fake_cuda_green_context_of(void* stream) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  const stream_state* s = f.find(static_cast<cudaStream_t>(stream));
  return s == nullptr ? nullptr : s->green;
}

void fake_cuda_set_sm_count(unsigned int sms) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.sms = sms;
}

int fake_cuda_set_event_ready(void* event, int ready) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  auto it = f.events.find(event);
  if (it == f.events.end()) return -1;
  it->second.ready = ready != 0;
  return 0;
}

// --- the runtime's functions --------------------------------------------------------------------

cudaError_t CUDARTAPI cudaGetLastError(void) {
  const cudaError_t code = last_error;
  last_error = cudaSuccess;
  return code;
}

cudaError_t CUDARTAPI cudaPeekAtLastError(void) { return last_error; }

cudaError_t CUDARTAPI cudaGetDeviceCount(int* count) {
  fake& f = state();
  f.count("cudaGetDeviceCount");
  if (count == nullptr) return fail(cudaErrorInvalidValue);
  *count = f.devices > 0 ? f.devices : 0;
  return f.devices > 0 ? cudaSuccess : fail(cudaErrorNoDevice);
}

cudaError_t CUDARTAPI cudaGetDevice(int* device) {
  fake& f = state();
  f.count("cudaGetDevice");
  if (f.devices <= 0) return fail(cudaErrorNoDevice);
  if (device == nullptr) return fail(cudaErrorInvalidValue);
  *device = current_device;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaSetDevice(int device) {
  fake& f = state();
  f.count("cudaSetDevice");
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
