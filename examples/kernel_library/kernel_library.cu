// The kernels of kernel_library.hpp, compiled once; every face (nanobind, torch, XLA, tvm-ffi)
// links this object.
#include "kernel_library.hpp"

#include <streamlike/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

namespace kernel_library::detail {
namespace {

constexpr int block = 256;

int grid_for(std::int64_t n) { return static_cast<int>(std::clamp<std::int64_t>((n + block - 1) / block, 1, 1024)); }

__global__ void scale_add_kernel(float a, const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    y[i] = a * x[i] + y[i];
}

// One block adds everything: deterministic (the same order on every run and every replay), and
// one launch, no second pass and no atomics. Enough for the sizes of an example.
__global__ void sum_kernel(const float* x, std::int64_t n, float* out) {
  __shared__ float partial[block];
  float mine = 0;
  for (std::int64_t i = threadIdx.x; i < n; i += block) mine += x[i];
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int half = block / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = partial[0];
}

// cudaGetLastError reads the launch's own error and is no stream call, so capture-safe.
void check_launch(const char* kernel) {
  if (const cudaError_t code = cudaGetLastError(); code != cudaSuccess) throw streamlike::error(code, kernel);
}

} // namespace

void launch_scale_add(float a, const float* x, float* y, std::int64_t n, streamlike::stream_view stream) {
  if (n <= 0) return;
  scale_add_kernel<<<grid_for(n), block, 0, stream.get()>>>(a, x, y, n);
  check_launch("kernel_library::scale_add");
}

void launch_sum(const float* x, std::int64_t n, float* out, streamlike::stream_view stream) {
  sum_kernel<<<1, block, 0, stream.get()>>>(x, n, out);
  check_launch("kernel_library::sum");
}

} // namespace kernel_library::detail
