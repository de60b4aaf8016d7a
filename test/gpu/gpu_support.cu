// Kernels and helpers shared by the gpu suite (see gpu_support.hpp).
#include "gpu_support.hpp"

#include <cuda_runtime.h>

#include <unistd.h> // environ

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
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

// Spins until the host sets state[0] (open), or gives up after timeout_ns and says so in state[1];
// state[2] says it started, state[3] that it returned.
__global__ void gate_kernel(volatile int* state, unsigned long long timeout_ns) {
  const unsigned long long start = global_time_ns();
  state[2] = 1;
  __threadfence_system();
  while (state[0] == 0) {
    if (global_time_ns() - start > timeout_ns) {
      state[1] = 1;
      break;
    }
    __nanosleep(1000);
  }
  __threadfence_system();
  state[3] = 1;
}

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

cudaError_t load_kernels(int device) {
  if (const cudaError_t code = cudaSetDevice(device); code != cudaSuccess) return code;
  mapped_ints state{4};
  state.write(0, 1); // the gate kernel returns at once
  int* out = nullptr;
  if (const cudaError_t code = cudaMalloc(&out, sizeof(int)); code != cudaSuccess) return code;
  write_kernel<<<1, 1>>>(out, 0);
  fill_kernel<<<1, 1>>>(out, 1, 0);
  gate_kernel<<<1, 1>>>(state.device(), 0);
  cudaError_t code = cudaGetLastError();
  if (const cudaError_t synced = cudaDeviceSynchronize(); code == cudaSuccess) code = synced;
  if (const cudaError_t freed = cudaFree(out); code == cudaSuccess) code = freed;
  return code;
}

namespace {

// The first environment variable compute-sanitizer sets in the processes it runs (seen with
// CUDA 13: NV_SANITIZER_INJECTION_PORT_BASE and others of that prefix), or "".
std::string sanitizer_variable() {
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "NV_SANITIZER_", 13) == 0) {
      const char* end = std::strchr(*entry, '=');
      return end != nullptr ? std::string(*entry, static_cast<std::size_t>(end - *entry)) : std::string(*entry);
    }
  }
  return {};
}

bool wait_until(const std::chrono::milliseconds limit, auto done) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// Three experiments on device 0, each with a gate (whose kernel must start within 2 s) held on one
// stream: a launch on it, a cudaMemcpyAsync on it, and a kernel on another stream. A queued call
// that returns only once the gate's kernel has ended waited for it.
concurrency measure() {
  using namespace std::chrono_literals;
  concurrency c;
  std::string seen;
  const auto note = [&](const char* what) { seen += seen.empty() ? what : std::string("; ") + what; };
  if (cudaSetDevice(0) != cudaSuccess) return c; // the tests' own calls will report it
  owned_stream held, other;
  mapped_ints flags{2};
  int* source = nullptr;
  if (cudaMalloc(&source, sizeof(int)) != cudaSuccess) return c;
  (void)cudaMemset(source, 0, sizeof(int));
  (void)cudaDeviceSynchronize();
  const auto experiment = [&](auto queue) -> bool { // true: the call queued without waiting
    gate g;
    if (g.close_unchecked(held.get(), 1s) != cudaSuccess) return true;
    if (!wait_until(2000ms, [&] { return g.started(); })) {
      note("a kernel did not start within 2 s");
      return false;
    }
    return queue(g);
  };
  c.launches_queue = experiment([&](gate& g) {
    (void)launch_write(held.get(), flags.device(), 1);
    return !g.ended();
  });
  if (!c.launches_queue && seen.empty())
    note("a kernel launch on a stream held by a running kernel returned only once that kernel had ended");
  c.copies_queue = experiment([&](gate& g) {
    (void)cudaMemcpyAsync(flags.device() + 1, source, sizeof(int), cudaMemcpyDefault, held.get());
    return !g.ended();
  });
  if (!c.copies_queue)
    note("a cudaMemcpyAsync on a stream held by a running kernel returned only once that kernel had ended");
  flags.write(0, 0);
  c.kernels_overlap = experiment([&](gate& g) {
    (void)launch_write(other.get(), flags.device(), 2);
    return wait_until(1000ms, [&] { return flags.read(0) == 2; }) && !g.ended();
  });
  if (!c.kernels_overlap) note("a kernel on one stream did not run within 1 s while another stream was held");
  (void)cudaDeviceSynchronize();
  (void)cudaFree(source);
  (void)cudaGetLastError();
  if (!seen.empty()) {
    const std::string sanitizer = sanitizer_variable();
    c.why = "in this process " + seen +
            (sanitizer.empty() ? std::string(" (no compute-sanitizer variable in the environment)")
                               : " (compute-sanitizer runs this process: " + sanitizer + " is set)");
  }
  return c;
}

} // namespace

const concurrency& measure_concurrency() {
  static const concurrency measured = measure();
  return measured;
}

bool check_possible(bool possible, const char* check) {
  if (possible) return true;
  const std::string& why = measure_concurrency().why;
  MESSAGE("skipped the check that " << check << ": " << why);
  std::fprintf(stderr, "gpu suite: skipped the check that %s: %s\n", check, why.c_str());
  return false;
}

gate::gate() = default;

gate::~gate() {
  if (closed_) {
    open();
    (void)cudaStreamSynchronize(closed_on_);
  }
}

cudaError_t gate::close(cudaStream_t stream, std::chrono::nanoseconds timeout) {
  if (!measure_concurrency().launches_queue) return cudaSuccess; // holds() says so
  return close_unchecked(stream, timeout);
}

cudaError_t gate::close_unchecked(cudaStream_t stream, std::chrono::nanoseconds timeout) {
  closed_on_ = stream;
  closed_ = true;
  gate_kernel<<<1, 1, 0, stream>>>(state_.device(), static_cast<unsigned long long>(timeout.count()));
  return cudaGetLastError();
}

void gate::open() noexcept { state_.write(0, 1); }

bool gate::timed_out() const noexcept { return state_.read(1) != 0; }

bool gate::started() const noexcept { return state_.read(2) != 0; }

bool gate::ended() const noexcept { return state_.read(3) != 0; }

bool gate::holds(const char* checks) const { return check_possible(closed_, checks); }

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
  const bool copy_held = measure_concurrency().copies_queue;
  if (copy_held) {
    GPU_REQUIRE_CUDA(cudaMemcpyAsync(copied.device(), filled, n * sizeof(int), cudaMemcpyDefault, view));
  }

  // Had the view been any other stream, this work would not wait for the gate and would be done
  // long before 50 ms.
  std::this_thread::sleep_for(50ms);
  if (g.holds("work queued through the view waits while the owner stream is held")) {
    CHECK_MESSAGE(flag.read(0) == 0, "a kernel queued through the view ran while the owner stream was held");
    if (check_possible(copy_held, "a copy queued through the view waits while the owner stream is held")) {
      CHECK_MESSAGE(copied.read(n - 1) == 0, "a copy queued through the view ran while the owner stream was held");
    }
    CHECK(cudaStreamQuery(view) == cudaErrorNotReady);
    CHECK(cudaStreamQuery(owner) == cudaErrorNotReady);
  }

  g.open();
  if (!copy_held) {
    GPU_REQUIRE_CUDA(cudaMemcpyAsync(copied.device(), filled, n * sizeof(int), cudaMemcpyDefault, view));
  }
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
