// Shared helpers of the gpu suite: kernels (compiled once, in gpu_support.cu), owners for the
// CUDA resources a test makes, and the check that work queued through a view runs on a given
// stream.
#ifndef STREAMLIKE_TEST_GPU_SUPPORT_HPP
#define STREAMLIKE_TEST_GPU_SUPPORT_HPP

#include <streamlike/stream_view.hpp>

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <string>

// A CUDA call must succeed; on failure the message names the call and the error.
#define GPU_REQUIRE_CUDA(expr)                                                                                 \
  do {                                                                                                         \
    const cudaError_t gpu_require_code_ = (expr);                                                              \
    REQUIRE_MESSAGE(gpu_require_code_ == cudaSuccess, #expr " failed: ", cudaGetErrorName(gpu_require_code_)); \
  } while (false)

namespace gpu_test {

// Runs the test cases of a suite program that needs `devices_needed` devices, and returns its exit
// code (gpu_suite.cpp; device_presence.hpp says when it skips).
int run_suite(int argc, char** argv, int devices_needed);

// Launches each kernel of this library once on `device` and waits for them. CUDA loads kernels
// lazily, and the first launch of a kernel may wait for the work already running on the device
// (seen across two devices, and for every kernel under compute-sanitizer): behind a held gate that
// wait lasts until the gate times out. The suite's main runs it on every device; a test runs it
// again after cudaDeviceReset, which unloads them. Leaves `device` current.
[[nodiscard]] cudaError_t load_kernels(int device);

// What the CUDA of this process does with work queued behind a running kernel, measured once, on
// device 0, with raw CUDA calls (the suite's main measures it before the first test case). The gate
// checks need all three; compute-sanitizer breaks some (initcheck: cudaMemcpyAsync returns only
// once the kernels before it have finished); synchronous launches (CUDA_LAUNCH_BLOCKING=1) would
// break the first. A check that
// needs what is missing is skipped, with a message naming it and `why` (see check_possible).
struct concurrency {
  bool launches_queue = true;  // a launch on a stream held by a running kernel returns at once
  bool copies_queue = true;    // so does a cudaMemcpyAsync into pinned memory
  bool kernels_overlap = true; // a kernel on another stream runs while one stream is held
  std::string why;             // when one is false: what was seen, and the sanitizer if one runs us
};
const concurrency& measure_concurrency();

// Returns `possible`. When false, says (a doctest MESSAGE, and a line on stderr that starts with
// "gpu suite: skipped the check") that the check described by `check` is skipped, and why
// (measure_concurrency().why). For: if (check_possible(c.copies_queue, "...")) CHECK(...);
bool check_possible(bool possible, const char* check);

// Launch wrappers; each returns the launch error (cudaGetLastError).
cudaError_t launch_write(cudaStream_t stream, int* out, int value);       // *out = value, one thread
cudaError_t launch_fill(cudaStream_t stream, int* out, int n, int value); // out[0..n) = value

// A stream created for one test, destroyed with it. Non-blocking: it does not synchronize with
// the legacy default stream, so only work queued on this very stream is ordered with it.
class owned_stream {
public:
  owned_stream();
  ~owned_stream();
  owned_stream(const owned_stream&) = delete;
  owned_stream& operator=(const owned_stream&) = delete;
  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }

private:
  cudaStream_t stream_{};
};

// Pinned host memory mapped into the device, zeroed: kernels write it, and the host can watch
// it while they run.
class mapped_ints {
public:
  explicit mapped_ints(std::size_t n);
  ~mapped_ints();
  mapped_ints(const mapped_ints&) = delete;
  mapped_ints& operator=(const mapped_ints&) = delete;
  [[nodiscard]] int* device() const noexcept { return device_; }
  [[nodiscard]] int read(std::size_t i) const noexcept; // a volatile read: sees the device's writes
  void write(std::size_t i, int value) noexcept;        // a volatile write: the device sees it

private:
  int* host_ = nullptr;
  int* device_ = nullptr;
};

// Holds back a stream: close(s) queues a kernel on s that spins until open() is called, so work
// queued on s after it cannot run before open(). A closed gate opens by itself after 10 s
// (timed_out() then says so), so a broken test fails instead of hanging. Destroying a gate opens
// it and waits for its kernel. Where a launch behind a running kernel waits for it
// (measure_concurrency().launches_queue is false), holding a stream cannot be observed: close()
// then queues nothing, and holds() skips the checks that look at the held state.
class gate {
public:
  gate();
  ~gate();
  gate(const gate&) = delete;
  gate& operator=(const gate&) = delete;
  [[nodiscard]] cudaError_t close(cudaStream_t stream, std::chrono::nanoseconds timeout = std::chrono::seconds(10));
  void open() noexcept;
  // Whether the gate opened by its timeout, not by open(); a gate that holds() found expired
  // under compute-sanitizer (its timeout passed while the host waited in a CUDA call) does not count.
  [[nodiscard]] bool timed_out() const noexcept;
  [[nodiscard]] bool started() const noexcept; // its kernel is running, or ran
  [[nodiscard]] bool ended() const noexcept;   // its kernel has returned (opened or timed out)
  // Whether the gate holds its stream now; if not, skips the checks described by `checks`, saying
  // why (check_possible). Not held: close() queued nothing (launches do not queue here), or, under
  // compute-sanitizer only, the gate's kernel already ended though open() was not called.
  [[nodiscard]] bool holds(const char* checks) const;

private:
  mapped_ints state_{4}; // [0]: open, [1]: timed out, [2]: started, [3]: ended
  cudaStream_t closed_on_{};
  bool closed_ = false;
  bool opened_ = false;
  mutable bool expired_ = false; // holds() saw it end before open(), under compute-sanitizer
};

// The check behind most tests: work queued through `view` runs on `owner`, after the work
// already queued there. A gate is closed on `owner`; a kernel, a fill of device memory and a copy
// back are then queued through `view`. While the gate is closed none of them may have run (work
// on any other non-blocking stream would have finished within microseconds); after the gate
// opens, cudaStreamSynchronize(view) must leave every value in place. Where a copy behind a
// running kernel waits for it (measure_concurrency().copies_queue), the copy is queued after the
// gate opens instead, and only its "not run while held" check is skipped.
void check_runs_on(cudaStream_t owner, streamlike::stream_view view);

// A producer whose effect comes only when the test says so: closes `held` on `stream` and queues
// *flag = value behind it. Until held.open() the flag stays unset however slow the host or fast
// the device, so an ordering check cannot pass by luck (a sleep that outlasted a missing wait) nor
// fail by it (a host too slow for a sleep).
cudaError_t launch_held_write(gate& held, cudaStream_t stream, int* flag, int value);

// Gives work that a missing wait would have left unordered its chance to run while the producer is
// held: polls seen[0..n) until one is nonzero, for at most `patience` (unheld, a kernel on an idle
// stream runs within microseconds; work correctly ordered behind the held producer never runs, and
// costs the full patience). Returns whether any ran.
bool let_unordered_work_run(const mapped_ints& seen, std::size_t n,
                            std::chrono::milliseconds patience = std::chrono::milliseconds(100));

// cudaStreamGetId (CUDA 12+): unique across the process, unlike handles.
[[nodiscard]] unsigned long long stream_id(cudaStream_t stream);

// The current device's stream priorities (cudaDeviceGetStreamPriorityRange): tests create streams
// at both ends and check that the priority asked for is the one the driver reports.
struct priority_range {
  int least = 0;    // the numerically greatest value: lowest priority
  int greatest = 0; // the numerically least value: highest priority
};
[[nodiscard]] priority_range device_priorities();

} // namespace gpu_test

#endif // STREAMLIKE_TEST_GPU_SUPPORT_HPP
