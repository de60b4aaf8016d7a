// streamcheck: what the CUPTI layer reads out of a driver call's parameters (CUPTI's
// <name>_params structs): the stream it is given and a capture's mode. Separate from the
// subscription so that a CPU test can check, for every driver call the toolkit names, that each
// call the checker judges by its stream has its stream read (test/streamcheck/cupti_params.cpp).
#ifndef STREAMLIKE_SRC_STREAMCHECK_CUPTI_PARAMS_HPP
#define STREAMLIKE_SRC_STREAMCHECK_CUPTI_PARAMS_HPP

#include <cupti.h>
#include <cuda_runtime_api.h>

namespace streamlike::check {

/// Whether the call `cbid` takes a stream argument that stream_of reads.
[[nodiscard]] bool takes_stream(CUpti_CallbackId cbid) noexcept;

/// The stream argument of the call `cbid` with parameters `params` (CUpti_CallbackData's
/// functionParams); false for a call that takes none.
bool stream_of(CUpti_CallbackId cbid, const void* params, CUstream* stream) noexcept;

/// The mode of a capture begun by the call `cbid` (cuStreamBeginCapture_v2, ...ToGraph and their
/// _ptsz forms); global for cuStreamBeginCapture, which takes no mode.
[[nodiscard]] cudaStreamCaptureMode capture_mode_of(CUpti_CallbackId cbid, const void* params) noexcept;

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_CUPTI_PARAMS_HPP
