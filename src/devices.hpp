// The process's devices: how many there are, which one is the calling thread's, and which one a
// stream or a context belongs to. The one place the library asks CUDA these (test device_home,
// suite tools), each in a throwing form (streamlike::error naming the caller and the CUDA call;
// std::invalid_argument for a device out of range) and a non-throwing one (a sentinel or the CUDA
// error, and no runtime error left behind). The count and the device of a stream or a context are
// asked of the driver first (through driver_entry_points.hpp, so libstreamlike links no libcuda),
// and of the runtime where the driver cannot answer, for its answer or, more often, for its own
// error in its words; the current device is the runtime's, but for the driver-first reads below
// (docs/developing.md, "Layout").
//
// The namespace is `devices`, not `device`: `device` names a local variable in most functions
// that call these, which would hide a namespace of that name.
#ifndef STREAMLIKE_SRC_DEVICES_HPP
#define STREAMLIKE_SRC_DEVICES_HPP

#include "driver_entry_points.hpp"

#include <cuda.h> // CUcontext
#include <cuda_runtime_api.h>

#include <atomic>
#include <string_view>

namespace streamlike::detail::devices {

// --- how many --------------------------------------------------------------------------------

/// The device count or why there is none: `count` > 0 with `error` cudaSuccess, or `count` 0 with
/// CUDA's error (cudaErrorNoDevice, cudaErrorInsufficientDriver, ...).
struct count_answer {
  int count = 0;
  cudaError_t error = cudaSuccess;
};

/// True for the errors that mean CUDA is absent from this process, for good: no driver
/// (cudaErrorInsufficientDriver, which an older driver than the runtime gets too) or no device
/// (cudaErrorNoDevice). Nothing can run anywhere then; a process does not gain either later.
[[nodiscard]] constexpr bool cuda_absent(cudaError_t code) noexcept {
  return code == cudaErrorInsufficientDriver || code == cudaErrorNoDevice;
}

/// The device count, asked of the driver (cuDeviceGetCount), else of the runtime
/// (cudaGetDeviceCount); remembered once CUDA answers, as it is fixed for the process
/// (CUDA_VISIBLE_DEVICES is read once, at initialization), and so is CUDA's absence
/// (cuda_absent): neither is asked again. Another failure is asked again next time. Never
/// throws, leaves no runtime error behind.
[[nodiscard]] count_answer try_count() noexcept;

/// try_count's count; throws streamlike::error naming "<who>: cudaGetDeviceCount" with CUDA's
/// error where there is none.
[[nodiscard]] int count(std::string_view who);

/// try_count's remembered count: > 0 once CUDA answered, else 0.
extern std::atomic<int> remembered_count;

/// The count if it was read already, else 0 (also where CUDA is absent): one load, for the
/// fast path of a check that a device below it passes (current_stream(device)).
[[nodiscard]] inline int count_if_known() noexcept { return remembered_count.load(std::memory_order_relaxed); }

/// std::invalid_argument naming `who`, the device and the range 0..count-1 for a device this
/// process does not have; streamlike::error (as count's) where the count cannot be read.
void check_named(int device, std::string_view who);

/// The same without throwing: true for a device this process has; false out of range and where
/// the count cannot be read.
[[nodiscard]] bool exists(int device) noexcept;

// --- the calling thread's current device ---------------------------------------------------------

/// The calling thread's current device, as the runtime answers it (cudaGetDevice): the device of
/// the current context, or the one the thread set (0 by default) before any context is current.
/// Every caller's but current_stream()'s and torch's provider's (below): an owner's create with a
/// named device makes this one call, which test/host/stream_creation_calls.cpp pins.
/// Throws streamlike::error naming "<who>: cudaGetDevice".
[[nodiscard]] int current(std::string_view who);

/// The same without throwing: -1 where it cannot be told (no driver, no device, the runtime
/// unloading at exit), leaving no runtime error behind. For destructors and guards that must not throw.
[[nodiscard]] int current_or_minus_one() noexcept;

/// The device of the calling thread's current context as the driver tells it (cuCtxGetDevice, which
/// cudaGetDevice wraps), without the runtime's wrapper; -1 where no context is current (a fresh
/// thread) or there is no driver. The fast path of the two "driver first" reads below: inline, so
/// that it costs one load and one call.
[[nodiscard]] inline int current_context_device_or_minus_one() noexcept {
  const auto get_device = driver::get().current_ctx_get_device;
  CUdevice device = 0;
  if (get_device != nullptr && get_device(&device) == CUDA_SUCCESS) [[likely]]
    return static_cast<int>(device);
  return -1;
}

/// current's answer, asked of the driver first; where the driver cannot tell, current. For
/// current_stream(), which asks on every call (bench/current_stream.cpp).
[[nodiscard]] inline int current_driver_first(std::string_view who) {
  if (const int device = current_context_device_or_minus_one(); device >= 0) [[likely]]
    return device;
  return current(who);
}

/// current_or_minus_one asked of the driver first, as current_driver_first is: for torch's scope
/// provider, which asks it three times a scope (the driver's query costs a fraction of
/// cudaGetDevice: bench/RESULTS.md, "Current stream against the getters it adds to").
[[nodiscard]] inline int current_or_minus_one_driver_first() noexcept {
  if (const int device = current_context_device_or_minus_one(); device >= 0) [[likely]]
    return device;
  return current_or_minus_one();
}

// --- the device of a stream or a context -----------------------------------------------------

/// The device `context` belongs to (cuCtxGetDevice of CUDA 13, which names the context); -1 where
/// the driver cannot answer (no driver, a driver older than CUDA 13, an invalid context).
[[nodiscard]] int of_context_or_minus_one(CUcontext context) noexcept;

/// The device `stream` belongs to, asked of its context (cuStreamGetCtx, cuCtxGetDevice) and so
/// safe on a capturing stream, where cudaStreamGetDevice would invalidate the capture. The
/// default streams (0, cudaStreamLegacy, cudaStreamPerThread) answer for the current device. Where
/// the driver cannot answer (no driver, an invalid handle, a driver older than CUDA 13) it asks
/// cudaStreamGetDevice, for the runtime's own error, after checking that the stream is not
/// capturing. Throws streamlike::error naming "<type>::<operation>".
[[nodiscard]] int of(cudaStream_t stream, std::string_view type, std::string_view operation);

/// The same without throwing: -1 where it cannot be told (for destructors).
[[nodiscard]] int of_or_minus_one(cudaStream_t stream) noexcept;

} // namespace streamlike::detail::devices

#endif // STREAMLIKE_SRC_DEVICES_HPP
