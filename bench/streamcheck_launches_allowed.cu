// bench/streamcheck_launches_allowed.cu: launches made from a library of their own, which the
// launch loop's allowed row (bench/streamcheck_launches.cu) allow-lists by its path
// (STREAMLIKE_CHECK_ALLOW=lib:streamcheck_launches_allowed, as bench/tools/streamcheck_overhead.py
// sets it): every frame of the call site in this library matches, however many of them the CUDA
// runtime linked into it adds.
#include <cuda_runtime_api.h>

namespace {

__global__ void empty_kernel() {}

} // namespace

/// `count` launches of an empty kernel on `stream`, from one call site.
extern "C" __attribute__((visibility("default"))) void streamcheck_allowed_launches(int count, cudaStream_t stream) {
  for (int i = 0; i < count; ++i) empty_kernel<<<1, 1, 0, stream>>>();
}
