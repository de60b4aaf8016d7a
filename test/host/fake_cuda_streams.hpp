// Streams made by the fake CUDA of test/fake_cuda, for the host programs that link it
// (exported, so that libstreamlike's CUDA calls reach it): the current-stream tests hand them to
// scopes, which ask a stream's device.
#ifndef STREAMLIKE_TEST_HOST_FAKE_CUDA_STREAMS_HPP
#define STREAMLIKE_TEST_HOST_FAKE_CUDA_STREAMS_HPP

#include "../fake_cuda/fake_cuda.h"

#include <streamlike/stream_view.hpp>

#include <cuda_runtime_api.h>

namespace host_test {

/// The device count the current-stream tests run with: two, so that "another device" exists.
constexpr int fake_devices = 2;

/// A new stream of the fake CUDA on `device` (the current device stays current). Sets the fake's
/// device count first: the count is read once per process, before any test runs.
inline streamlike::stream_view fake_cuda_stream(int device) {
  fake_cuda_set_devices(fake_devices);
  int before = 0;
  cudaStream_t handle = nullptr;
  if (cudaGetDevice(&before) != cudaSuccess || cudaSetDevice(device) != cudaSuccess ||
      cudaStreamCreate(&handle) != cudaSuccess || cudaSetDevice(before) != cudaSuccess)
    return streamlike::stream_view{cudaStream_t{}}; // the test's REQUIREs on the fake fail loudly
  return streamlike::stream_view{handle};
}

} // namespace host_test

#endif // STREAMLIKE_TEST_HOST_FAKE_CUDA_STREAMS_HPP
