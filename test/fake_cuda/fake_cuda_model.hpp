// The fake CUDA's model, shared by its sources (fake_cuda.h says what it models): the state of
// streams, events, graphs, user objects and green contexts behind one lock, and the steps the
// runtime's and the driver's calls share. Internal to test/fake_cuda/. Every function takes the one
// lock; host functions and user-object destructors are called with it released (they may queue
// work for a thread that calls back in).
#pragma once

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

namespace fake_cuda_model {

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
  // Version 0 is what cudaDriverGetVersion reports without a driver: the fake then has none.
  [[nodiscard]] bool no_driver() const { return driver_version == 0; }

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

  void* reused_green_handle = nullptr; // fake_cuda_reuse_green_context_handle: the next green context's

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

fake& state();

// The calling thread's last error (cudaGetLastError), current device, and capture interaction mode
// (cuThreadExchangeStreamCaptureMode; CUDA's default is global).
inline thread_local cudaError_t last_error = cudaSuccess;
inline thread_local int current_device = 0;
inline thread_local int interaction_mode = cudaStreamCaptureModeGlobal;

// Records `code` as the thread's last error (but success and not-ready) and returns it.
cudaError_t fail(cudaError_t code);
// Runs host functions and destructors, with the lock released.
void run(const deferred& calls);
// Takes the host functions queued on `s`, to run as CUDA would once its earlier work is done.
deferred take_pending(fake& f, stream_state& s);

cudaError_t create_stream(cudaStream_t* out, unsigned int flags, int priority, void* green = nullptr);
// The destroy of a stream (the runtime's or the driver's, counted as `name`).
cudaError_t destroy_stream(const char* name, cudaStream_t stream);
// The query or synchronize of a stream: invalidating on a capturing stream, unsafe for global
// captures otherwise; runs the stream's host functions.
cudaError_t query_or_sync(const char* name, cudaStream_t stream, bool sync);
cudaError_t record(const char* name, cudaEvent_t event, cudaStream_t stream);
cudaError_t stream_wait_event(const char* name, cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t event_query_or_sync(const char* name, cudaEvent_t event);

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

// One context per device, at a handle the device can be read back from.
int ctx_device(CUcontext ctx);
CUcontext ctx_of_device(int device);
CUresult to_driver(cudaError_t code);

// The driver function cudaGetDriverEntryPointByVersion hands out for `name` at `version`, or null
// (fake_cuda_driver.cpp).
void* driver_function(const std::string& name, unsigned int version);

} // namespace fake_cuda_model
