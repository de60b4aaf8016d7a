// Kernels with a duration (see timed_kernels.hpp).
#include "timed_kernels.hpp"

#include <cuda_runtime.h>

#include <cstdlib>

namespace gpu_test {
namespace {

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ void spin_for(unsigned long long ns) {
  const unsigned long long start = now_ns();
  while (now_ns() - start < ns) __nanosleep(1000);
}

__global__ void spin_then_write_kernel(volatile int* flag, int value, unsigned long long ns) {
  spin_for(ns);
  __threadfence_system();
  *flag = value;
  __threadfence_system();
}

__global__ void observe_kernel(const volatile int* flag, int expected, volatile int* seen) {
  *seen = *flag == expected ? 1 : 2;
  __threadfence_system();
}

__global__ void spin_kernel(unsigned long long ns) { spin_for(ns); }

} // namespace

cudaError_t launch_spin_then_write(cudaStream_t stream, int* flag, int value, unsigned long long ns) {
  spin_then_write_kernel<<<1, 1, 0, stream>>>(flag, value, ns);
  return cudaGetLastError();
}

cudaError_t launch_observe(cudaStream_t stream, const int* flag, int expected, int* seen) {
  observe_kernel<<<1, 1, 0, stream>>>(flag, expected, seen);
  return cudaGetLastError();
}

cudaError_t launch_spin(cudaStream_t stream, unsigned long long ns) {
  spin_kernel<<<1, 1, 0, stream>>>(ns);
  return cudaGetLastError();
}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

long lifecycle_streams() {
  if (const char* text = std::getenv("STREAMLIKE_GPU_LIFECYCLE_STREAMS")) {
    const long n = std::strtol(text, nullptr, 10);
    if (n > 0) return n;
  }
  return 100'000;
}

} // namespace gpu_test
