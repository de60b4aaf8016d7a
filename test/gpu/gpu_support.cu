// Kernels and helpers shared by the gpu suite (see gpu_support.hpp).
#include "gpu_support.hpp"

#include "gate_kernel.cuh"

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

// Raw calls only, no doctest assertion: the suite's main runs it before doctest starts.
cudaError_t load_kernels(int device) {
  if (const cudaError_t code = cudaSetDevice(device); code != cudaSuccess) return code;
  int* memory = nullptr; // [0]: written by the kernels; [1..4]: the gate kernel's state, open
  if (const cudaError_t code = cudaMalloc(&memory, 5 * sizeof(int)); code != cudaSuccess) return code;
  cudaError_t code = cudaMemset(memory, 0, 5 * sizeof(int));
  if (code == cudaSuccess) code = cudaMemset(memory + 1, 0xff, sizeof(int)); // open: the gate kernel returns at once
  if (code == cudaSuccess) {
    write_kernel<<<1, 1>>>(memory, 0);
    fill_kernel<<<1, 1>>>(memory, 1, 0);
    streamlike_test_gate<<<1, 1>>>(memory + 1, 0);
    code = cudaGetLastError();
  }
  if (const cudaError_t synced = cudaDeviceSynchronize(); code == cudaSuccess) code = synced;
  if (const cudaError_t freed = cudaFree(memory); code == cudaSuccess) code = freed;
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

// Three experiments on device 0, each with a gate kernel (which must start within 2 s) holding
// one stream: a launch on that stream, a cudaMemcpyAsync on it, and a kernel on another stream. A
// queued call that returns only once the gate kernel has ended waited for it. Raw calls only, no
// doctest check (the suite's main runs it before doctest starts, and before any test counts the
// streams it sees created).
concurrency measure() {
  using namespace std::chrono_literals;
  concurrency c;
  std::string seen;
  const auto note = [&](const char* what) { seen += seen.empty() ? what : std::string("; ") + what; };
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess || cudaSetDevice(0) != cudaSuccess) return c; // the tests report it
  cudaStream_t held{}, other{};
  int* host = nullptr; // [0..3]: the gate's state, [4], [5]: written by the queued work
  int* device = nullptr;
  int* source = nullptr;
  bool ready = cudaStreamCreateWithFlags(&held, cudaStreamNonBlocking) == cudaSuccess &&
               cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking) == cudaSuccess &&
               cudaHostAlloc(reinterpret_cast<void**>(&host), 6 * sizeof(int), cudaHostAllocMapped) == cudaSuccess &&
               cudaHostGetDevicePointer(reinterpret_cast<void**>(&device), host, 0) == cudaSuccess &&
               cudaMalloc(&source, sizeof(int)) == cudaSuccess && cudaMemset(source, 0, sizeof(int)) == cudaSuccess &&
               cudaDeviceSynchronize() == cudaSuccess;
  const auto read = [&](int i) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return static_cast<const volatile int*>(host)[i];
  };
  const auto write = [&](int i, int value) {
    static_cast<volatile int*>(host)[i] = value;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  };
  const auto experiment = [&](auto queue) -> bool { // true: the call queued without waiting
    for (int i = 0; i < 6; ++i) write(i, 0);
    streamlike_test_gate<<<1, 1, 0, held>>>(device, 1'000'000'000ull); // 1 s
    if (cudaGetLastError() != cudaSuccess) return true;                // the tests' own gates will report it
    bool queued = false;
    if (!wait_until(2000ms, [&] { return read(2) != 0; })) {
      note("a kernel did not start within 2 s");
    } else {
      queued = queue() && read(3) == 0;
    }
    write(0, 1); // open
    (void)cudaDeviceSynchronize();
    return queued;
  };
  if (ready) {
    c.launches_queue = experiment([&] { return launch_write(held, device + 4, 1) == cudaSuccess; });
    if (!c.launches_queue && seen.empty())
      note("a kernel launch on a stream held by a running kernel returned only once that kernel had ended");
    c.copies_queue = experiment(
        [&] { return cudaMemcpyAsync(device + 5, source, sizeof(int), cudaMemcpyDefault, held) == cudaSuccess; });
    if (!c.copies_queue)
      note("a cudaMemcpyAsync on a stream held by a running kernel returned only once that kernel had ended");
    c.kernels_overlap = experiment([&] {
      return launch_write(other, device + 4, 2) == cudaSuccess && wait_until(1000ms, [&] { return read(4) == 2; });
    });
    if (!c.kernels_overlap) note("a kernel on one stream did not run within 1 s while another stream was held");
  }
  (void)cudaDeviceSynchronize();
  if (source != nullptr) (void)cudaFree(source);
  if (host != nullptr) (void)cudaFreeHost(host);
  if (other != nullptr) (void)cudaStreamDestroy(other);
  if (held != nullptr) (void)cudaStreamDestroy(held);
  (void)cudaGetLastError();
  (void)cudaSetDevice(previous);
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
  closed_on_ = stream;
  closed_ = true;
  streamlike_test_gate<<<1, 1, 0, stream>>>(state_.device(), static_cast<unsigned long long>(timeout.count()));
  return cudaGetLastError();
}

void gate::open() noexcept {
  opened_ = true;
  state_.write(0, 1);
}

bool gate::timed_out() const noexcept { return !expired_ && state_.read(1) != 0; }

bool gate::started() const noexcept { return state_.read(2) != 0; }

bool gate::ended() const noexcept { return state_.read(3) != 0; }

bool gate::holds(const char* checks) const {
  if (!closed_) return check_possible(false, checks);
  // Ended before it was opened: a CUDA call queued behind it returned only when it timed out, so
  // the held state was never observable. Forgiven under compute-sanitizer only (some of its tools
  // make calls wait for the running kernels); anywhere else the timeout stays a failure.
  if (!opened_ && ended() && !sanitizer_variable().empty()) {
    expired_ = true;
    const std::string why = "the gate's kernel ended (its timeout) before the checks ran: a CUDA call queued behind "
                            "it returned only once it had ended (compute-sanitizer runs this process: " +
                            sanitizer_variable() + " is set)";
    MESSAGE("skipped the check that " << checks << ": " << why);
    std::fprintf(stderr, "gpu suite: skipped the check that %s: %s\n", checks, why.c_str());
    return false;
  }
  return true;
}

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

cudaError_t launch_held_write(gate& held, cudaStream_t stream, int* flag, int value) {
  if (const cudaError_t closed = held.close(stream); closed != cudaSuccess) return closed;
  return launch_write(stream, flag, value);
}

bool let_unordered_work_run(const mapped_ints& seen, std::size_t n, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    for (std::size_t i = 0; i < n; ++i) {
      if (seen.read(i) != 0) return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

} // namespace gpu_test
