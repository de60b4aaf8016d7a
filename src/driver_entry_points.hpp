// The few CUDA driver functions streamlike needs, fetched through cudart's entry-point query so
// that libstreamlike does not link libcuda (absent on machines without a driver, where the
// library must still load and report errors).
#ifndef STREAMLIKE_SRC_DRIVER_ENTRY_POINTS_HPP
#define STREAMLIKE_SRC_DRIVER_ENTRY_POINTS_HPP

#include <cuda.h> // types only
#include <cuda_runtime_api.h>

#include <atomic>

namespace streamlike::detail::driver {

struct entry_points {
  // First, with the two after them, the calls of every create and drop: in the first cache line
  // of `table` with its flag (a create runs with its caches cold from the driver's own work).
  /// What the owners' create and drop make of the runtime's calls where the calling thread's
  /// current context is the stream's (src/stream_lifecycle.cpp): the same driver calls, without
  /// the runtime's wrapper around each, and the current context's id in place of cudaGetDevice
  /// and the primary context's retain and release. Null where missing (the runtime calls are
  /// used then); not part of complete().
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*stream_create_with_priority)(CUstream*, unsigned int, int) = nullptr;
  CUresult (*stream_destroy)(CUstream) = nullptr;
  CUresult (*stream_get_id)(CUstream, unsigned long long*) = nullptr;
  CUresult (*stream_get_ctx)(CUstream, CUcontext*) = nullptr;
  CUresult (*ctx_get_id)(CUcontext, unsigned long long*) = nullptr;
  CUresult (*primary_ctx_get_state)(CUdevice, unsigned int*, int*) = nullptr;
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*primary_ctx_release)(CUdevice) = nullptr;
  /// cuCtxGetDevice of CUDA 13 (a context's device, the context named rather than current): with
  /// stream_get_ctx, the device of a stream without cudaStreamGetDevice, which invalidates a
  /// capture. Null with an older driver; not part of complete().
  CUresult (*ctx_get_device)(CUdevice*, CUcontext) = nullptr;
  /// cuCtxGetDevice of CUDA 12 (the current context's device, no context to name or check): what
  /// current_stream() asks for the current device. Null where missing.
  CUresult (*current_ctx_get_device)(CUdevice*) = nullptr;
  /// cuDeviceGetCount: the device count, asked once (src/devices.cpp), without the runtime's
  /// wrapper. Null where missing (the runtime call is used then); not part of complete().
  CUresult (*device_get_count)(int*) = nullptr;
  /// The capture check of every eager wait (src/ordering.cpp), several times cheaper than
  /// cudaStreamIsCapturing (bench/RESULTS.md, "Ordering"). Null where missing (the runtime call is
  /// used then); not part of complete().
  CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus*) = nullptr;
  /// The record and the wait of every eager wait (src/ordering.cpp): together cheaper than
  /// cudaEventRecord + cudaStreamWaitEvent, which wrap them (bench/RESULTS.md, "Ordering"). Null
  /// where missing (the runtime calls are used then); not part of complete().
  CUresult (*event_record)(CUevent, CUstream) = nullptr;
  CUresult (*stream_wait_event)(CUstream, CUevent, unsigned int) = nullptr;
  /// The calling thread's capture interaction mode, swapped (src/capture_checks.cpp asks it while
  /// a capture_scope capture runs). Null where missing (the strictest mode is assumed then); not
  /// part of complete().
  CUresult (*thread_exchange_stream_capture_mode)(CUstreamCaptureMode*) = nullptr;

  /// Green contexts (SM partitions: src/partition.cpp), resolved with their CUDA 13 ABI (the
  /// size of CUdevResource changed with it). Null with a driver that has none (before CUDA 12.4);
  /// not part of complete(): partition::create names the missing one.
  CUresult (*device_get_dev_resource)(CUdevice, CUdevResource*, CUdevResourceType) = nullptr;
  CUresult (*ctx_get_dev_resource)(CUcontext, CUdevResource*, CUdevResourceType) = nullptr;
  CUresult (*green_ctx_get_dev_resource)(CUgreenCtx, CUdevResource*, CUdevResourceType) = nullptr;
  CUresult (*dev_sm_resource_split_by_count)(CUdevResource*, unsigned int*, const CUdevResource*, CUdevResource*,
                                             unsigned int, unsigned int) = nullptr;
  CUresult (*dev_resource_generate_desc)(CUdevResourceDesc*, CUdevResource*, unsigned int) = nullptr;
  CUresult (*green_ctx_create)(CUgreenCtx*, CUdevResourceDesc, CUdevice, unsigned int) = nullptr;
  CUresult (*green_ctx_destroy)(CUgreenCtx) = nullptr;
  CUresult (*ctx_from_green_ctx)(CUcontext*, CUgreenCtx) = nullptr;
  CUresult (*green_ctx_stream_create)(CUstream*, CUgreenCtx, unsigned int, int) = nullptr;
  CUresult (*stream_get_green_ctx)(CUstream, CUgreenCtx*) = nullptr;

  [[nodiscard]] bool complete() const noexcept {
    return stream_get_ctx && ctx_get_id && primary_ctx_get_state && primary_ctx_retain && primary_ctx_release;
  }
};

/// The entry points and whether they are resolved yet, in one object aligned to a cache line.
struct alignas(64) resolved_entry_points {
  std::atomic<bool> ready{false};
  entry_points points;
};
extern resolved_entry_points table;
[[gnu::cold]] const entry_points& resolve_once() noexcept;

/// Resolved once, on first use; members stay null where the driver is missing. Inline, so that
/// the several uses on every stream creation cost one load each, not a call.
inline const entry_points& get() noexcept {
  if (table.ready.load(std::memory_order_acquire)) [[likely]]
    return table.points;
  return resolve_once();
}

} // namespace streamlike::detail::driver

#endif // STREAMLIKE_SRC_DRIVER_ENTRY_POINTS_HPP
