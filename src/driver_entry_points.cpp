#include "driver_entry_points.hpp"

namespace streamlike::detail::driver {
namespace {

template <class Fn>
void resolve(Fn& fn, const char* symbol) noexcept {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult status{};
  // 12000: the ABI of each symbol as of CUDA 12.0 (e.g. cuDevicePrimaryCtxRelease resolves to _v2).
  if (cudaGetDriverEntryPointByVersion(symbol, &address, 12000, cudaEnableDefault, &status) == cudaSuccess &&
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
  return e;
}

} // namespace

const entry_points& get() noexcept {
  static const entry_points points = load();
  return points;
}

unsigned long long primary_context_id(int device) noexcept {
  const auto& drv = get();
  if (!drv.complete()) return 0;
  unsigned int flags = 0;
  int active = 0;
  if (drv.primary_ctx_get_state(device, &flags, &active) != CUDA_SUCCESS || active == 0) return 0;
  CUcontext primary = nullptr;
  if (drv.primary_ctx_retain(&primary, device) != CUDA_SUCCESS) return 0;
  unsigned long long id = 0;
  if (drv.ctx_get_id(primary, &id) != CUDA_SUCCESS) id = 0;
  drv.primary_ctx_release(device);
  return id;
}

} // namespace streamlike::detail::driver
