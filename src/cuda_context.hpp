// The CUDA context a stream or event lives in, and whether it is still alive: the one place
// that asks the driver (through driver_entry_points.hpp, so libstreamlike links no libcuda).
// Which device a context, a stream or the calling thread is on is asked in src/devices.hpp.
//
// cudaDeviceReset destroys a device's primary context and every stream and event in it, and the
// driver may hand the same handles to new objects. So an object that must release a handle later
// records, when it is made, the id (cuCtxGetId, unique for the process) of the primary context
// it lives in; before touching the handle it checks that the device's primary context still has
// that id (or, cheaper, that the thread's current context has it: a context with that id is
// alive). Objects of other contexts (driver-API or green contexts) belong to whoever made those
// contexts, who must keep them alive while they are used: they record 0.
#ifndef STREAMLIKE_SRC_CUDA_CONTEXT_HPP
#define STREAMLIKE_SRC_CUDA_CONTEXT_HPP

#include "driver_entry_points.hpp"

#include <cuda.h> // CUcontext
#include <cuda_runtime_api.h>

namespace streamlike::detail::cuda_context {

/// The unique id of the context `stream` lives in (cuStreamGetCtx, cuCtxGetId); 0 where it cannot
/// be told (no driver, an invalid handle). Two driver calls, no runtime call: cheap enough for
/// every wait().
[[nodiscard]] unsigned long long id_of(cudaStream_t stream) noexcept;

/// The unique id of `device`'s primary context if it is active, else 0. Activates nothing.
[[nodiscard]] unsigned long long primary_id(int device) noexcept;

/// What to record for liveness: `context_id` if it is `device`'s primary context, else 0.
[[nodiscard]] unsigned long long primary_or_zero(unsigned long long context_id, int device) noexcept;

/// False exactly when `recorded_primary_id` (a value of primary_or_zero) names a primary context
/// of `device` that is gone: the object died with it and its handle must not be touched.
[[nodiscard]] bool still_alive(unsigned long long recorded_primary_id, int device) noexcept;

/// The calling thread's current context, as the owners' create and drop use it in place of the
/// runtime's cudaGetDevice and the primary context's retain and release.
struct current_context {
  CUcontext handle = nullptr;
  unsigned long long id = 0;         // cuCtxGetId: unique for the process, never reused
  int device = -1;                   // the context's device
  unsigned long long primary_id = 0; // `id` if the context is its device's primary context, else 0
};

/// The current context in `out`: two driver calls (cuCtxGetCurrent, cuCtxGetId), the device and
/// primary-ness remembered for each context id met, for every thread (fixed for a context's life).
/// False, with `out` unspecified, where the driver cannot answer: no context is current yet (the
/// runtime makes one on its first call), the current primary context was reset and not made
/// again, or the driver lacks the functions. Never throws, leaves no runtime error behind.
[[nodiscard]] bool current(current_context& out) noexcept;

/// The unique id of the calling thread's current context, 0 where there is none (or it was reset
/// and not made again): cuCtxGetCurrent and cuCtxGetId, no runtime call.
[[nodiscard]] unsigned long long current_id() noexcept;

} // namespace streamlike::detail::cuda_context

#endif // STREAMLIKE_SRC_CUDA_CONTEXT_HPP
