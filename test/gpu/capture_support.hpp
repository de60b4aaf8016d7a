// What the CUDA graph capture programs (capture_*.cu) share: the kernel they capture and replay,
// and the three capture modes each check runs under.
#ifndef STREAMLIKE_TEST_GPU_CAPTURE_SUPPORT_HPP
#define STREAMLIKE_TEST_GPU_CAPTURE_SUPPORT_HPP

#include <cuda_runtime_api.h>

namespace gpu_test {

namespace {
// One thread adds `value`: replaying a graph of these leaves a count that shows how often each ran.
// (Internal linkage: each program includes this header from one source.)
__global__ void add_kernel(int* counter, int value) { *counter += value; }
} // namespace

struct mode_case {
  cudaStreamCaptureMode mode;
  const char* name;
};
inline constexpr mode_case modes[] = {{cudaStreamCaptureModeGlobal, "global"},
                                      {cudaStreamCaptureModeThreadLocal, "thread-local"},
                                      {cudaStreamCaptureModeRelaxed, "relaxed"}};

} // namespace gpu_test

#endif // STREAMLIKE_TEST_GPU_CAPTURE_SUPPORT_HPP
