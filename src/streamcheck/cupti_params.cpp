#include "cupti_params.hpp"

namespace streamlike::check {

bool takes_stream(CUpti_CallbackId cbid) noexcept {
  switch (cbid) {
#define STREAMCHECK_STREAM_CALL(name) case CUPTI_DRIVER_TRACE_CBID_##name:
#include "stream_of_call.inc"
#undef STREAMCHECK_STREAM_CALL
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: return true;
    default: return false;
  }
}

bool stream_of(CUpti_CallbackId cbid, const void* params, CUstream* stream) noexcept {
  switch (cbid) {
#define STREAMCHECK_STREAM_CALL(name)                             \
  case CUPTI_DRIVER_TRACE_CBID_##name:                            \
    *stream = static_cast<const name##_params*>(params)->hStream; \
    return true;
#include "stream_of_call.inc"
#undef STREAMCHECK_STREAM_CALL
    // The stream of cuLaunchKernelEx is in its launch configuration.
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
      const CUlaunchConfig* config = static_cast<const cuLaunchKernelEx_params*>(params)->config;
      if (config == nullptr) return false;
      *stream = config->hStream;
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const CUlaunchConfig* config = static_cast<const cuLaunchKernelEx_ptsz_params*>(params)->config;
      if (config == nullptr) return false;
      *stream = config->hStream;
      return true;
    }
    default: return false;
  }
}

cudaStreamCaptureMode capture_mode_of(CUpti_CallbackId cbid, const void* params) noexcept {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2:
      return static_cast<cudaStreamCaptureMode>(static_cast<const cuStreamBeginCapture_v2_params*>(params)->mode);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz:
      return static_cast<cudaStreamCaptureMode>(static_cast<const cuStreamBeginCapture_v2_ptsz_params*>(params)->mode);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph:
      return static_cast<cudaStreamCaptureMode>(static_cast<const cuStreamBeginCaptureToGraph_params*>(params)->mode);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz:
      return static_cast<cudaStreamCaptureMode>(
          static_cast<const cuStreamBeginCaptureToGraph_ptsz_params*>(params)->mode);
    default: return cudaStreamCaptureModeGlobal;
  }
}

} // namespace streamlike::check
