// streamcheck: what the CUPTI layer reads out of a driver call's parameters (CUPTI's
// <name>_params structs): the stream it is given and a capture's mode. Separate from the
// subscription so that a CPU test can check, for every driver call the toolkit names, that each
// call the checker judges by its stream has its stream read (test/streamcheck/cupti_params.cpp).
#ifndef STREAMLIKE_SRC_STREAMCHECK_CUPTI_PARAMS_HPP
#define STREAMLIKE_SRC_STREAMCHECK_CUPTI_PARAMS_HPP

#include <cupti.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace streamlike::check {

/// Whether the call `cbid` takes a stream argument that stream_of reads.
[[nodiscard]] bool takes_stream(CUpti_CallbackId cbid) noexcept;

/// The stream argument of the call `cbid` with parameters `params` (CUpti_CallbackData's
/// functionParams); false for a call that takes none.
bool stream_of(CUpti_CallbackId cbid, const void* params, CUstream* stream) noexcept;

/// The other object a call names, as the order needs it: the event of an event record, wait,
/// synchronization, query or destruction; the memory word of a cuStreamWriteValue* or
/// cuStreamWaitValue*. 0 for any other call.
[[nodiscard]] std::uintptr_t object_of(CUpti_CallbackId cbid, const void* params) noexcept;

/// The stream a cuStreamCreate*, cuGreenCtxStreamCreate call made, read once it returned, and its
/// flags; false for any other call (or a null output pointer).
bool created_stream_of(CUpti_CallbackId cbid, const void* params, CUstream* stream, unsigned int* flags) noexcept;

/// The memory operations of a cuStreamBatchMemOp call, in order: `each(context, writes, address)`
/// for every wait (writes false) and write (writes true) of a memory word; its stream through
/// stream_of. False for any other call.
bool for_each_memory_op(CUpti_CallbackId cbid, const void* params,
                        void (*each)(void* context, bool writes, std::uintptr_t address), void* context) noexcept;

/// The mode of a capture begun by the call `cbid` (cuStreamBeginCapture_v2, ...ToGraph and their
/// _ptsz forms); global for cuStreamBeginCapture, which takes no mode.
[[nodiscard]] cudaStreamCaptureMode capture_mode_of(CUpti_CallbackId cbid, const void* params) noexcept;

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_CUPTI_PARAMS_HPP
