#include "cupti_params.hpp"

namespace streamlike::check {

bool takes_stream(CUpti_CallbackId cbid) noexcept {
  switch (cbid) {
#define STREAMCHECK_STREAM_CALL(name) case CUPTI_DRIVER_TRACE_CBID_##name:
#include "stream_of_call.inc"
#undef STREAMCHECK_STREAM_CALL
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_v2_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_v2_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2_ptsz:
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
    // The memory-word calls name their stream `stream`.
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32:
      *stream = static_cast<const cuStreamWaitValue32_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_ptsz:
      *stream = static_cast<const cuStreamWaitValue32_ptsz_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32:
      *stream = static_cast<const cuStreamWriteValue32_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_ptsz:
      *stream = static_cast<const cuStreamWriteValue32_ptsz_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64:
      *stream = static_cast<const cuStreamWaitValue64_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_ptsz:
      *stream = static_cast<const cuStreamWaitValue64_ptsz_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64:
      *stream = static_cast<const cuStreamWriteValue64_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_ptsz:
      *stream = static_cast<const cuStreamWriteValue64_ptsz_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2:
      *stream = static_cast<const cuStreamWaitValue32_v2_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2_ptsz:
      *stream = static_cast<const cuStreamWaitValue32_v2_ptsz_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2:
      *stream = static_cast<const cuStreamWaitValue64_v2_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2_ptsz:
      *stream = static_cast<const cuStreamWaitValue64_v2_ptsz_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_v2:
      *stream = static_cast<const cuStreamWriteValue32_v2_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_v2_ptsz:
      *stream = static_cast<const cuStreamWriteValue32_v2_ptsz_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_v2:
      *stream = static_cast<const cuStreamWriteValue64_v2_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_v2_ptsz:
      *stream = static_cast<const cuStreamWriteValue64_v2_ptsz_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp:
      *stream = static_cast<const cuStreamBatchMemOp_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_ptsz:
      *stream = static_cast<const cuStreamBatchMemOp_ptsz_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2:
      *stream = static_cast<const cuStreamBatchMemOp_v2_params*>(params)->stream;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2_ptsz:
      *stream = static_cast<const cuStreamBatchMemOp_v2_ptsz_params*>(params)->stream;
      return true;
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

namespace {

template <class Params>
std::uintptr_t handle(const void* params, auto Params::*member) noexcept {
  return reinterpret_cast<std::uintptr_t>(static_cast<const Params*>(params)->*member);
}

} // namespace

std::uintptr_t object_of(CUpti_CallbackId cbid, const void* params) noexcept {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecord: return handle(params, &cuEventRecord_params::hEvent);
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz: return handle(params, &cuEventRecord_ptsz_params::hEvent);
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags: return handle(params, &cuEventRecordWithFlags_params::hEvent);
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags_ptsz:
      return handle(params, &cuEventRecordWithFlags_ptsz_params::hEvent);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent: return handle(params, &cuStreamWaitEvent_params::hEvent);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz: return handle(params, &cuStreamWaitEvent_ptsz_params::hEvent);
    case CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize: return handle(params, &cuEventSynchronize_params::hEvent);
    case CUPTI_DRIVER_TRACE_CBID_cuEventQuery: return handle(params, &cuEventQuery_params::hEvent);
    case CUPTI_DRIVER_TRACE_CBID_cuEventDestroy: return handle(params, &cuEventDestroy_params::hEvent);
    case CUPTI_DRIVER_TRACE_CBID_cuEventDestroy_v2: return handle(params, &cuEventDestroy_v2_params::hEvent);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWaitValue32_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_ptsz:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWaitValue32_ptsz_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWriteValue32_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_ptsz:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWriteValue32_ptsz_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWaitValue64_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_ptsz:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWaitValue64_ptsz_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWriteValue64_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_ptsz:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWriteValue64_ptsz_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWaitValue32_v2_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2_ptsz:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWaitValue32_v2_ptsz_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWaitValue64_v2_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2_ptsz:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWaitValue64_v2_ptsz_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_v2:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWriteValue32_v2_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_v2_ptsz:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWriteValue32_v2_ptsz_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_v2:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWriteValue64_v2_params*>(params)->addr);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_v2_ptsz:
      return static_cast<std::uintptr_t>(static_cast<const cuStreamWriteValue64_v2_ptsz_params*>(params)->addr);
    default: return 0;
  }
}

bool created_stream_of(CUpti_CallbackId cbid, const void* params, CUstream* stream, unsigned int* flags) noexcept {
  CUstream* made = nullptr;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuStreamCreate:
      made = static_cast<const cuStreamCreate_params*>(params)->phStream;
      *flags = static_cast<const cuStreamCreate_params*>(params)->Flags;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamCreateWithPriority:
      made = static_cast<const cuStreamCreateWithPriority_params*>(params)->phStream;
      *flags = static_cast<const cuStreamCreateWithPriority_params*>(params)->flags;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuGreenCtxStreamCreate:
      made = static_cast<const cuGreenCtxStreamCreate_params*>(params)->phStream;
      *flags = static_cast<const cuGreenCtxStreamCreate_params*>(params)->flags;
      break;
    default: return false;
  }
  if (made == nullptr) return false;
  *stream = *made;
  return true;
}

namespace {

template <class Params>
bool memory_ops(const void* params, void (*each)(void*, bool, std::uintptr_t), void* context) noexcept {
  const auto* p = static_cast<const Params*>(params);
  if (p->paramArray == nullptr) return true;
  for (unsigned int i = 0; i < p->count; ++i) {
    const CUstreamBatchMemOpParams& op = p->paramArray[i];
    switch (op.operation) {
      case CU_STREAM_MEM_OP_WAIT_VALUE_32:
      case CU_STREAM_MEM_OP_WAIT_VALUE_64:
        each(context, false, static_cast<std::uintptr_t>(op.waitValue.address));
        break;
      case CU_STREAM_MEM_OP_WRITE_VALUE_32:
      case CU_STREAM_MEM_OP_WRITE_VALUE_64:
        each(context, true, static_cast<std::uintptr_t>(op.writeValue.address));
        break;
      default: break; // flushes and barriers order nothing between streams
    }
  }
  return true;
}

} // namespace

bool for_each_memory_op(CUpti_CallbackId cbid, const void* params,
                        void (*each)(void* context, bool writes, std::uintptr_t address), void* context) noexcept {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp:
      return memory_ops<cuStreamBatchMemOp_params>(params, each, context);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_ptsz:
      return memory_ops<cuStreamBatchMemOp_ptsz_params>(params, each, context);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2:
      return memory_ops<cuStreamBatchMemOp_v2_params>(params, each, context);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2_ptsz:
      return memory_ops<cuStreamBatchMemOp_v2_ptsz_params>(params, each, context);
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
