// The interposer behind call_counters.hpp. Each extern "C" function below has the exact signature
// that cuda_runtime_api.h declares; the program exports it (meson export_dynamic: true), so the
// dynamic linker binds every caller in the process to it, libstreamlike.so included. It forwards to
// the next definition in lookup order, the real one in libcudart.so.
#include "call_counters.hpp"

#include <dlfcn.h>

#include <cuda.h> // the driver's types, for the entry points counted below

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace call_counters {
namespace {

struct state {
  std::mutex mutex;
  counts totals;
  bool used = false;
  std::set<cudaStream_t> live;
  std::map<cudaStream_t, long long> destroy_calls;
};

// Never destroyed: streams are still destroyed after main returns (static shared_streams), when
// a function-local static would already be gone.
state& tracker() {
  static state* const s = new state;
  return *s;
}

// The real function: the next definition after this program's, in libcudart.so. Without it
// nothing can work: say so and stop.
template <class Fn>
Fn real(const char* name) {
  void* address = dlsym(RTLD_NEXT, name);
  if (address == nullptr) {
    std::fprintf(stderr, "call_counters: dlsym(RTLD_NEXT, \"%s\") found nothing: is libcudart.so linked?\n", name);
    std::abort();
  }
  return reinterpret_cast<Fn>(address);
}

void created(cudaError_t status, const cudaStream_t* handle) {
  if (status != cudaSuccess || handle == nullptr) return;
  state& s = tracker();
  const std::lock_guard lock(s.mutex);
  s.used = true;
  ++s.totals.stream_creates;
  if (!s.live.insert(*handle).second) ++s.totals.creates_while_live;
}

// Counted before the real destroy: once it returns, another thread may be handed the same handle.
void destroying(cudaStream_t stream) {
  state& s = tracker();
  const std::lock_guard lock(s.mutex);
  s.used = true;
  ++s.destroy_calls[stream];
  if (s.live.erase(stream) == 1) {
    ++s.totals.stream_destroys;
  } else {
    ++s.totals.destroys_not_live;
  }
}

void destroy_failed() {
  state& s = tracker();
  const std::lock_guard lock(s.mutex);
  ++s.totals.stream_destroys_failed;
}

} // namespace

counts now() {
  state& s = tracker();
  const std::lock_guard lock(s.mutex);
  counts c = s.totals;
  c.live_streams = s.live.size();
  return c;
}

counts since(const counts& a, const counts& b) {
  counts d;
  d.stream_creates = b.stream_creates - a.stream_creates;
  d.stream_destroys = b.stream_destroys - a.stream_destroys;
  d.stream_destroys_failed = b.stream_destroys_failed - a.stream_destroys_failed;
  d.destroys_not_live = b.destroys_not_live - a.destroys_not_live;
  d.creates_while_live = b.creates_while_live - a.creates_while_live;
  d.event_creates = b.event_creates - a.event_creates;
  d.event_destroys = b.event_destroys - a.event_destroys;
  d.event_records = b.event_records - a.event_records;
  d.stream_wait_events = b.stream_wait_events - a.stream_wait_events;
  d.live_streams = b.live_streams;
  return d;
}

bool active() {
  state& s = tracker();
  const std::lock_guard lock(s.mutex);
  return s.used;
}

bool is_live(cudaStream_t handle) {
  state& s = tracker();
  const std::lock_guard lock(s.mutex);
  return s.live.contains(handle);
}

std::set<cudaStream_t> live_streams() {
  state& s = tracker();
  const std::lock_guard lock(s.mutex);
  return s.live;
}

long long destroy_calls_for(cudaStream_t handle) {
  state& s = tracker();
  const std::lock_guard lock(s.mutex);
  const auto it = s.destroy_calls.find(handle);
  return it == s.destroy_calls.end() ? 0 : it->second;
}

void forget(cudaStream_t handle) {
  state& s = tracker();
  const std::lock_guard lock(s.mutex);
  s.live.erase(handle);
}

std::ostream& operator<<(std::ostream& os, const counts& c) {
  return os << "{stream creates " << c.stream_creates << ", destroys " << c.stream_destroys << " (failed "
            << c.stream_destroys_failed << "), destroys of a handle not live " << c.destroys_not_live
            << ", creates of a handle still live " << c.creates_while_live << ", live " << c.live_streams
            << "; event creates " << c.event_creates << ", destroys " << c.event_destroys << ", records "
            << c.event_records << ", stream waits " << c.stream_wait_events << "}";
}

void counted(long long counts::*which) {
  auto& s = tracker();
  const std::lock_guard lock(s.mutex);
  s.used = true;
  ++(s.totals.*which);
}

// Both event-creating entry points count alike.
void event_created(cudaError_t status) {
  if (status == cudaSuccess) counted(&counts::event_creates);
}

// The driver's record and wait, as libstreamlike gets them from cudaGetDriverEntryPointByVersion
// (below): counted like the runtime's, then forwarded.
CUresult (*real_cu_event_record)(CUevent, CUstream) = nullptr;
CUresult (*real_cu_stream_wait_event)(CUstream, CUevent, unsigned int) = nullptr;

CUresult counting_cu_event_record(CUevent event, CUstream stream) {
  counted(&counts::event_records);
  return real_cu_event_record(event, stream);
}

CUresult counting_cu_stream_wait_event(CUstream stream, CUevent event, unsigned int flags) {
  counted(&counts::stream_wait_events);
  return real_cu_stream_wait_event(stream, event, flags);
}

// The driver's create and destroy, which libstreamlike's owners use where the stream's context
// is current: counted and tracked like the runtime's.
CUresult (*real_cu_stream_create_with_priority)(CUstream*, unsigned int, int) = nullptr;
CUresult (*real_cu_stream_destroy)(CUstream) = nullptr;

CUresult counting_cu_stream_create_with_priority(CUstream* stream, unsigned int flags, int priority) {
  const CUresult status = real_cu_stream_create_with_priority(stream, flags, priority);
  created(status == CUDA_SUCCESS ? cudaSuccess : cudaErrorUnknown, stream);
  return status;
}

CUresult counting_cu_stream_destroy(CUstream stream) {
  destroying(stream);
  const CUresult status = real_cu_stream_destroy(stream);
  if (status != CUDA_SUCCESS) destroy_failed();
  return status;
}

// Hands out the counting form of a driver entry point this file counts; others unchanged.
void substitute(const char* symbol, void** address) {
  if (address == nullptr || *address == nullptr) return;
  if (std::strcmp(symbol, "cuStreamCreateWithPriority") == 0) {
    real_cu_stream_create_with_priority = reinterpret_cast<decltype(real_cu_stream_create_with_priority)>(*address);
    *address = reinterpret_cast<void*>(&counting_cu_stream_create_with_priority);
  } else if (std::strcmp(symbol, "cuStreamDestroy") == 0) {
    real_cu_stream_destroy = reinterpret_cast<decltype(real_cu_stream_destroy)>(*address);
    *address = reinterpret_cast<void*>(&counting_cu_stream_destroy);
  } else if (std::strcmp(symbol, "cuEventRecord") == 0) {
    real_cu_event_record = reinterpret_cast<decltype(real_cu_event_record)>(*address);
    *address = reinterpret_cast<void*>(&counting_cu_event_record);
  } else if (std::strcmp(symbol, "cuStreamWaitEvent") == 0) {
    real_cu_stream_wait_event = reinterpret_cast<decltype(real_cu_stream_wait_event)>(*address);
    *address = reinterpret_cast<void*>(&counting_cu_stream_wait_event);
  }
}

} // namespace call_counters

using call_counters::real;
using call_counters::tracker;

extern "C" {

cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
  using fn_type = cudaError_t (*)(cudaStream_t*);
  static const fn_type fn = real<fn_type>(__func__);
  const cudaError_t status = fn(pStream);
  call_counters::created(status, pStream);
  return status;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  using fn_type = cudaError_t (*)(cudaStream_t*, unsigned int);
  static const fn_type fn = real<fn_type>(__func__);
  const cudaError_t status = fn(pStream, flags);
  call_counters::created(status, pStream);
  return status;
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) {
  using fn_type = cudaError_t (*)(cudaStream_t*, unsigned int, int);
  static const fn_type fn = real<fn_type>(__func__);
  const cudaError_t status = fn(pStream, flags, priority);
  call_counters::created(status, pStream);
  return status;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  using fn_type = cudaError_t (*)(cudaStream_t);
  static const fn_type fn = real<fn_type>(__func__);
  call_counters::destroying(stream);
  const cudaError_t status = fn(stream);
  if (status != cudaSuccess) call_counters::destroy_failed();
  return status;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  using fn_type = cudaError_t (*)(cudaEvent_t*);
  static const fn_type fn = real<fn_type>(__func__);
  const cudaError_t status = fn(event);
  call_counters::event_created(status);
  return status;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  using fn_type = cudaError_t (*)(cudaEvent_t*, unsigned int);
  static const fn_type fn = real<fn_type>(__func__);
  const cudaError_t status = fn(event, flags);
  call_counters::event_created(status);
  return status;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  using fn_type = cudaError_t (*)(cudaEvent_t);
  static const fn_type fn = real<fn_type>(__func__);
  call_counters::counted(&call_counters::counts::event_destroys);
  return fn(event);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  using fn_type = cudaError_t (*)(cudaEvent_t, cudaStream_t);
  static const fn_type fn = real<fn_type>(__func__);
  call_counters::counted(&call_counters::counts::event_records);
  return fn(event, stream);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  using fn_type = cudaError_t (*)(cudaStream_t, cudaEvent_t, unsigned int);
  static const fn_type fn = real<fn_type>(__func__);
  call_counters::counted(&call_counters::counts::stream_wait_events);
  return fn(stream, event, flags);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags, cudaDriverEntryPointQueryResult* driverStatus) {
  using fn_type =
      cudaError_t (*)(const char*, void**, unsigned int, unsigned long long, cudaDriverEntryPointQueryResult*);
  static const fn_type fn = real<fn_type>(__func__);
  const cudaError_t status = fn(symbol, funcPtr, cudaVersion, flags, driverStatus);
  if (status == cudaSuccess) call_counters::substitute(symbol, funcPtr);
  return status;
}

} // extern "C"
