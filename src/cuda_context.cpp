#include "cuda_context.hpp"

#include "devices.hpp"
#include "driver_entry_points.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

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
  if (context_id == 0) return 0;
  // Context ids are never reused: a context once seen as `device`'s primary context is that
  // context for as long as it lives, and a stream just created or adopted in it proves it lives.
  // So the last primary id seen per device spares the four driver calls of primary_id() on every
  // create (bench/stream_pool, create rows); a new primary context (after cudaDeviceReset) has a
  // new id, misses, and is asked for.
  constexpr int cached_devices = 64;
  static std::atomic<unsigned long long> known_primary[cached_devices];
  const bool cached = device >= 0 && device < cached_devices;
  if (cached && known_primary[device].load(std::memory_order_relaxed) == context_id) return context_id;
  if (primary_id(device) != context_id) return 0;
  if (cached) known_primary[device].store(context_id, std::memory_order_relaxed);
  return context_id;
}

bool still_alive(unsigned long long recorded_primary_id, int device) noexcept {
  return recorded_primary_id == 0 || primary_id(device) == recorded_primary_id;
}

unsigned long long current_id() noexcept {
  const auto& drv = driver::get();
  if (drv.ctx_get_current == nullptr || drv.ctx_get_id == nullptr) return 0;
  CUcontext ctx = nullptr;
  unsigned long long id = 0;
  if (drv.ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr || drv.ctx_get_id(ctx, &id) != CUDA_SUCCESS) return 0;
  return id;
}

namespace {

// What current() remembers of the contexts it has met. A context's device and whether it is
// primary are fixed for its life, and its id is never reused, so an answer stays true for that
// id, on every thread. Each answer is packed in one atomic word (the id in bits 0-39, the device
// in 40-61, bit 62 set for a primary context), in one of a few slots chosen by the id: a create
// reads one word, with no thread-local lookup, and no reader can see half an answer. An id or
// device too large to pack (none in practice: the driver numbers contexts from 1) is asked every
// time.
constexpr std::uint64_t id_bits = 40;
constexpr std::uint64_t id_mask = (std::uint64_t{1} << id_bits) - 1;
constexpr std::uint64_t device_mask = (std::uint64_t{1} << 22) - 1;
constexpr std::uint64_t primary_bit = std::uint64_t{1} << 62;
constexpr std::size_t remembered_slots = 8;
std::atomic<std::uint64_t> remembered[remembered_slots] = {};

std::atomic<std::uint64_t>& slot_of(unsigned long long id) noexcept { return remembered[id % remembered_slots]; }

// A context not remembered (met for the first time, or its slot taken by another since): its
// device and primary-ness, asked and remembered.
[[gnu::noinline, gnu::cold]] bool remember(current_context& ctx) noexcept {
  int device = -1;
  if (driver::get().ctx_get_device != nullptr) {
    if (device = devices::of_context_or_minus_one(ctx.handle); device < 0) return false;
  } else if (device = devices::current_or_minus_one(); device < 0) { // a driver before CUDA 13: the current context's
    return false;
  }
  ctx.device = device;
  ctx.primary_id = primary_or_zero(ctx.id, device);
  if (ctx.id <= id_mask && device >= 0 && static_cast<std::uint64_t>(device) <= device_mask) {
    slot_of(ctx.id).store(ctx.id | (static_cast<std::uint64_t>(device) << id_bits) |
                              (ctx.primary_id != 0 ? primary_bit : 0),
                          std::memory_order_relaxed);
  }
  return true;
}

} // namespace

bool current(current_context& out) noexcept {
  const auto& drv = driver::get();
  if (drv.ctx_get_current == nullptr || drv.ctx_get_id == nullptr) return false;
  if (drv.ctx_get_current(&out.handle) != CUDA_SUCCESS || out.handle == nullptr) return false;
  // An uninitialized primary context (reset, not made again) answers CUDA_ERROR_CONTEXT_IS_DESTROYED.
  if (drv.ctx_get_id(out.handle, &out.id) != CUDA_SUCCESS || out.id == 0) return false;
  const std::uint64_t packed = slot_of(out.id).load(std::memory_order_relaxed);
  if ((packed & id_mask) != out.id) [[unlikely]]
    return remember(out);
  out.device = static_cast<int>((packed >> id_bits) & device_mask);
  out.primary_id = (packed & primary_bit) != 0 ? out.id : 0;
  return true;
}

} // namespace streamlike::detail::cuda_context
