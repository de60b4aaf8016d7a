// The probes of probe.hpp.
#include "probe.hpp"

#include <streamlike/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <new>

namespace kernel_library::probe {
namespace {

__global__ void gated_copy_kernel(volatile int* state, const float* x, float* t, std::int64_t n,
                                  std::uint64_t timeout_ns) {
  if (threadIdx.x == 0) {
    std::uint64_t start = 0;
    std::uint64_t now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    state[2] = 1;
    __threadfence_system();
    while (state[0] == 0) {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      if (now - start > timeout_ns) {
        state[1] = 1;
        break;
      }
      __nanosleep(1000);
    }
  }
  __syncthreads();
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) t[i] = x[i];
}

__global__ void write_kernel(int* out, int value) { *out = value; }

void check(cudaError_t code, const char* what) {
  if (code != cudaSuccess) throw streamlike::error(code, what);
}

} // namespace

gate::gate() {
  void* memory = nullptr;
  check(cudaHostAlloc(&memory, 4 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable),
        "cudaHostAlloc (the probe's gate)");
  state_ = static_cast<volatile int*>(memory);
  reset();
}

gate::~gate() { (void)cudaFreeHost(const_cast<int*>(state_)); }

std::uintptr_t gate::address() const noexcept { return reinterpret_cast<std::uintptr_t>(state_); }
void gate::open() noexcept { state_[0] = 1; }
void gate::reset() noexcept {
  for (int i = 0; i < 4; ++i) state_[i] = 0;
}
bool gate::started() const noexcept { return state_[2] != 0; }
bool gate::timed_out() const noexcept { return state_[1] != 0; }

void gated_copy(std::uintptr_t gate_address, const float* x, float* t, std::int64_t n, std::uint64_t timeout_ns,
                streamlike::stream_view stream) {
  gated_copy_kernel<<<1, 256, 0, stream.get()>>>(reinterpret_cast<volatile int*>(gate_address), x, t, n, timeout_ns);
  check(cudaGetLastError(), "kernel_library::probe::gated_copy");
}

void write_capturing(int* out, streamlike::stream_view stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(stream.get(), &status), "cudaStreamIsCapturing");
  write_kernel<<<1, 1, 0, stream.get()>>>(out, status == cudaStreamCaptureStatusActive ? 1 : 0);
  check(cudaGetLastError(), "kernel_library::probe::write_capturing");
}

} // namespace kernel_library::probe
