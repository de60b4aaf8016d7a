// streamlike/adapters/cublas.hpp: a cublasHandle_t is stream_like.
//
// get_stream(handle) yields the stream the handle's work is queued on (cublasGetStream). It only
// reads: the handle's stream is never changed. The handle 0 (a handle on which cublasSetStream
// was never called, or was called with 0) is cuBLAS's default stream; libcublas is compiled
// without per-thread default streams, so that is the legacy default stream, returned as
// stream_view::legacy_default() whatever the calling translation unit's mode.
//
// A failing cublasGetStream (a null or destroyed handle: CUBLAS_STATUS_NOT_INITIALIZED) throws
// streamlike::error with cudaErrorInvalidResourceHandle, naming cuBLAS's status.
// Link cuBLAS (-lcublas).
#ifndef STREAMLIKE_ADAPTERS_CUBLAS_HPP
#define STREAMLIKE_ADAPTERS_CUBLAS_HPP

#include <streamlike/error.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <cublas_v2.h>

#include <string>

namespace streamlike {

/// get_stream of a cuBLAS handle (found by ADL through the tag's namespace: a cublasHandle_t is a
/// pointer to a struct in the global namespace, which streamlike cannot add to).
inline stream_view tag_invoke(get_stream_t, cublasHandle_t handle) {
  cudaStream_t stream = nullptr;
  const cublasStatus_t status = cublasGetStream(handle, &stream);
  if (status != CUBLAS_STATUS_SUCCESS) [[unlikely]] {
    throw error(cudaErrorInvalidResourceHandle,
                std::string("get_stream(cublasHandle_t): cublasGetStream returned ") + cublasGetStatusName(status));
  }
  return stream == cudaStream_t{} ? stream_view::legacy_default() : stream_view{stream};
}

} // namespace streamlike

#endif // STREAMLIKE_ADAPTERS_CUBLAS_HPP
