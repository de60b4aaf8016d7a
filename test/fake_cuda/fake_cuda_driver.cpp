// The fake CUDA's driver functions, handed out by cudaGetDriverEntryPointByVersion (what the fake
// models: fake_cuda.h): contexts, the stream queries, events, and green contexts.
#include "fake_cuda_model.hpp"

namespace fake_cuda_model {
namespace {

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
  if (f.devices <= 0) return CUDA_ERROR_NOT_INITIALIZED; // no device: cuInit failed, no context exists
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const green_state* g = ctx == nullptr ? nullptr : green_of(f, ctx);
  *device = ctx == nullptr ? current_device : (g != nullptr ? g->device : ctx_device(ctx));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_cuCtxGetDevice(CUdevice* device) { return fake_cuCtxGetDevice_v2(device, nullptr); }

// No device: cuInit failed (CUDA_ERROR_NO_DEVICE) and the driver answers as uninitialized.
CUresult CUDAAPI fake_cuDeviceGetCount(int* count) {
  fake& f = state();
  f.count("cuDeviceGetCount");
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (f.devices <= 0) return CUDA_ERROR_NOT_INITIALIZED;
  *count = f.devices;
  return CUDA_SUCCESS;
}

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
  void* handle = f.reused_green_handle != nullptr ? std::exchange(f.reused_green_handle, nullptr) : f.new_handle();
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

} // namespace

void* driver_function(const std::string& name, unsigned int version) {
  static const std::map<std::string, void*> functions = {
      {"cuStreamGetCtx", reinterpret_cast<void*>(&fake_cuStreamGetCtx)},
      {"cuCtxGetId", reinterpret_cast<void*>(&fake_cuCtxGetId)},
      {"cuDeviceGetCount", reinterpret_cast<void*>(&fake_cuDeviceGetCount)},
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

} // namespace fake_cuda_model
