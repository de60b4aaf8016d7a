#include "cuda_context.hpp"

#include "driver_entry_points.hpp"

namespace streamlike::detail::cuda_context {

unsigned long long id_of(cudaStream_t stream) noexcept {
  const auto& drv = driver::get();
  if (drv.stream_get_ctx == nullptr || drv.ctx_get_id == nullptr) return 0;
  CUcontext ctx = nullptr;
  unsigned long long id = 0;
  if (drv.stream_get_ctx(stream, &ctx) != CUDA_SUCCESS || drv.ctx_get_id(ctx, &id) != CUDA_SUCCESS) return 0;
  return id;
}

unsigned long long primary_id(int device) noexcept {
  const auto& drv = driver::get();
  if (!drv.complete()) return 0;
  unsigned int flags = 0;
  int active = 0;
  // Asked first so that an inactive primary context is not made active by the retain below.
  if (drv.primary_ctx_get_state(device, &flags, &active) != CUDA_SUCCESS || active == 0) return 0;
  CUcontext primary = nullptr;
  if (drv.primary_ctx_retain(&primary, device) != CUDA_SUCCESS) return 0;
  unsigned long long id = 0;
  if (drv.ctx_get_id(primary, &id) != CUDA_SUCCESS) id = 0;
  drv.primary_ctx_release(device);
  return id;
}

unsigned long long primary_or_zero(unsigned long long context_id, int device) noexcept {
  return context_id != 0 && primary_id(device) == context_id ? context_id : 0;
}

bool still_alive(unsigned long long recorded_primary_id, int device) noexcept {
  return recorded_primary_id == 0 || primary_id(device) == recorded_primary_id;
}

} // namespace streamlike::detail::cuda_context
