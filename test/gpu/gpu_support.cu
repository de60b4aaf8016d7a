// Kernels and helpers shared by the gpu suite (see gpu_support.hpp).
#include "gpu_support.hpp"

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace gpu_test {
namespace {

__global__ void write_kernel(int* out, int value) { *out = value; }

__global__ void fill_kernel(int* out, int n, int value) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = value;
}

__device__ unsigned long long global_time_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins until the host sets *open, or gives up after timeout_ns and says so in *timed_out.
__global__ void gate_kernel(const volatile int* open, volatile int* timed_out, unsigned long long timeout_ns) {
  const unsigned long long start = global_time_ns();
  while (*open == 0) {
    if (global_time_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
    __nanosleep(1000);
  }
}

constexpr unsigned long long gate_timeout_ns = 10'000'000'000ull; // well inside the test's 120 s

} // namespace

cudaError_t launch_write(cudaStream_t stream, int* out, int value) {
  write_kernel<<<1, 1, 0, stream>>>(out, value);
  return cudaGetLastError();
}

cudaError_t launch_fill(cudaStream_t stream, int* out, int n, int value) {
  fill_kernel<<<(n + 255) / 256, 256, 0, stream>>>(out, n, value);
  return cudaGetLastError();
}

owned_stream::owned_stream() { GPU_REQUIRE_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }

owned_stream::~owned_stream() {
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
}

mapped_ints::mapped_ints(std::size_t n) {
  GPU_REQUIRE_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&host_), n * sizeof(int), cudaHostAllocMapped));
  for (std::size_t i = 0; i < n; ++i) host_[i] = 0;
  GPU_REQUIRE_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0));
}

mapped_ints::~mapped_ints() {
  if (host_ != nullptr) (void)cudaFreeHost(host_);
}

int mapped_ints::read(std::size_t i) const noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return static_cast<const volatile int*>(host_)[i];
}

void mapped_ints::write(std::size_t i, int value) noexcept {
  static_cast<volatile int*>(host_)[i] = value;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

gate::gate() = default;

gate::~gate() {
  if (closed_) {
    open();
    (void)cudaStreamSynchronize(closed_on_);
  }
}

cudaError_t gate::close(cudaStream_t stream) {
  closed_on_ = stream;
  closed_ = true;
  gate_kernel<<<1, 1, 0, stream>>>(state_.device(), state_.device() + 1, gate_timeout_ns);
  return cudaGetLastError();
}

void gate::open() noexcept { state_.write(0, 1); }

bool gate::timed_out() const noexcept { return state_.read(1) != 0; }

void check_runs_on(cudaStream_t owner, streamlike::stream_view view) {
  using namespace std::chrono_literals;
  constexpr int n = 1 << 16;

  // Everything is allocated before the gate closes: nothing below may wait for the device while
  // the gate holds it (cudaFree does).
  mapped_ints flag{1};
  mapped_ints copied{n};
  int* filled = nullptr;
  GPU_REQUIRE_CUDA(cudaMalloc(&filled, n * sizeof(int)));
  struct device_free {
    int* p;
    ~device_free() { (void)cudaFree(p); }
  } free_filled{filled};
  gate g; // declared last, destroyed first: it opens before anything above waits for the device

  GPU_REQUIRE_CUDA(g.close(owner));
  GPU_REQUIRE_CUDA(launch_write(view, flag.device(), 42));
  GPU_REQUIRE_CUDA(launch_fill(view, filled, n, 7));
  // Into pinned memory, so the copy is asynchronous and ordered on the view's stream.
  GPU_REQUIRE_CUDA(cudaMemcpyAsync(copied.device(), filled, n * sizeof(int), cudaMemcpyDefault, view));

  // Had the view been any other stream, this work would not wait for the gate and would be done
  // long before 50 ms.
  std::this_thread::sleep_for(50ms);
  CHECK_MESSAGE(flag.read(0) == 0, "a kernel queued through the view ran while the owner stream was held");
  CHECK_MESSAGE(copied.read(n - 1) == 0, "a copy queued through the view ran while the owner stream was held");
  CHECK(cudaStreamQuery(view) == cudaErrorNotReady);
  CHECK(cudaStreamQuery(owner) == cudaErrorNotReady);

  g.open();
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(view));
  CHECK_FALSE(g.timed_out());
  CHECK(cudaStreamQuery(owner) == cudaSuccess); // the same stream: drained by the view's sync
  CHECK(flag.read(0) == 42);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += copied.read(static_cast<std::size_t>(i)) != 7;
  CHECK_MESSAGE(wrong == 0, wrong, " of ", n, " elements were not filled and copied in order");
}

unsigned long long stream_id(cudaStream_t stream) {
  unsigned long long id = 0;
  GPU_REQUIRE_CUDA(cudaStreamGetId(stream, &id));
  return id;
}

priority_range device_priorities() {
  priority_range range;
  GPU_REQUIRE_CUDA(cudaDeviceGetStreamPriorityRange(&range.least, &range.greatest));
  return range;
}

} // namespace gpu_test
