// Kernels with a duration, for the ownership and ordering programs of the gpu suite (compiled once,
// in timed_kernels.cu), and the lifecycle count those programs share.
#ifndef STREAMLIKE_TEST_GPU_TIMED_KERNELS_HPP
#define STREAMLIKE_TEST_GPU_TIMED_KERNELS_HPP

#include <cuda_runtime_api.h>

namespace gpu_test {

// Spins for `ns` nanoseconds of the device's global timer, then stores `value` to *flag with a
// system-wide fence on either side: a long-running producer whose only effect comes at its end.
cudaError_t launch_spin_then_write(cudaStream_t stream, int* flag, int value, unsigned long long ns);

// *seen = 1 if *flag == expected when it runs, else 2 (0 stays: it never ran): a consumer that
// records what it saw.
cudaError_t launch_observe(cudaStream_t stream, const int* flag, int expected, int* seen);

// Spins for `ns` nanoseconds.
cudaError_t launch_spin(cudaStream_t stream, unsigned long long ns);

// cudaGetDeviceCount, 0 on error (with the error cleared).
[[nodiscard]] int device_count();

// How many streams each lifecycle test makes and drops per way in: 100,000, or
// $STREAMLIKE_GPU_LIFECYCLE_STREAMS (e.g. 1000 for a quick run).
[[nodiscard]] long lifecycle_streams();

} // namespace gpu_test

#endif // STREAMLIKE_TEST_GPU_TIMED_KERNELS_HPP
