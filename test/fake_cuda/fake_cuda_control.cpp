// The fake CUDA's control API (fake_cuda.h): what tests set and read back.
#include "fake_cuda_model.hpp"

using namespace fake_cuda_model;

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

void fake_cuda_reuse_green_context_handle(void* green_context) {
  fake& f = state();
  std::lock_guard guard(f.lock);
  f.reused_green_handle = green_context;
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

} // extern "C"
