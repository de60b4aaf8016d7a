#include "driver_entry_points.hpp"

#include <mutex>

namespace streamlike::detail::driver {
namespace {

template <class Fn>
void resolve(Fn& fn, const char* symbol, int version = 12000) noexcept {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult status{};
  // 12000: the ABI of each symbol as of CUDA 12.0 (e.g. cuDevicePrimaryCtxRelease resolves to _v2).
  if (cudaGetDriverEntryPointByVersion(symbol, &address, version, cudaEnableDefault, &status) == cudaSuccess &&
      status == cudaDriverEntryPointSuccess) {
    fn = reinterpret_cast<Fn>(address);
  } else {
    cudaGetLastError(); // leave no sticky error behind
  }
}

entry_points load() noexcept {
  entry_points e;
  resolve(e.stream_get_ctx, "cuStreamGetCtx");
  resolve(e.ctx_get_id, "cuCtxGetId");
  resolve(e.primary_ctx_get_state, "cuDevicePrimaryCtxGetState");
  resolve(e.primary_ctx_retain, "cuDevicePrimaryCtxRetain");
  resolve(e.primary_ctx_release, "cuDevicePrimaryCtxRelease");
  resolve(e.ctx_get_device, "cuCtxGetDevice", 13000);  // the form that names the context
  resolve(e.current_ctx_get_device, "cuCtxGetDevice"); // the form that asks the current context
  resolve(e.device_get_count, "cuDeviceGetCount");
  resolve(e.stream_is_capturing, "cuStreamIsCapturing");
  resolve(e.event_record, "cuEventRecord");
  resolve(e.stream_wait_event, "cuStreamWaitEvent");
  resolve(e.thread_exchange_stream_capture_mode, "cuThreadExchangeStreamCaptureMode");
  resolve(e.ctx_get_current, "cuCtxGetCurrent");
  resolve(e.stream_create_with_priority, "cuStreamCreateWithPriority");
  resolve(e.stream_destroy, "cuStreamDestroy"); // _v2 as of 12.0, what cudaStreamDestroy calls
  resolve(e.stream_get_id, "cuStreamGetId");
  resolve(e.device_get_dev_resource, "cuDeviceGetDevResource", 13000);
  resolve(e.ctx_get_dev_resource, "cuCtxGetDevResource", 13000);
  resolve(e.green_ctx_get_dev_resource, "cuGreenCtxGetDevResource", 13000);
  resolve(e.dev_sm_resource_split_by_count, "cuDevSmResourceSplitByCount", 13000);
  resolve(e.dev_resource_generate_desc, "cuDevResourceGenerateDesc", 13000);
  resolve(e.green_ctx_create, "cuGreenCtxCreate", 13000);
  resolve(e.green_ctx_destroy, "cuGreenCtxDestroy", 13000);
  resolve(e.ctx_from_green_ctx, "cuCtxFromGreenCtx", 13000);
  resolve(e.green_ctx_stream_create, "cuGreenCtxStreamCreate", 13000);
  resolve(e.stream_get_green_ctx, "cuStreamGetGreenCtx", 13000);
  return e;
}

} // namespace

resolved_entry_points table;

const entry_points& resolve_once() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    table.points = load();
    table.ready.store(true, std::memory_order_release);
  });
  return table.points;
}

} // namespace streamlike::detail::driver
