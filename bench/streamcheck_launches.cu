// bench/streamcheck_launches.cu: a loop of 10,000 small launches on the current stream, the
// workload whose wall time streamcheck must not raise by more than 10%. bench/tools/
// streamcheck_overhead.py runs it without the checker, with the checker injected but off, and with
// it on, in processes of their own; and, since two processes differ by more than the checker
// costs, with the checker on it also times the loop with the checker paused, in the same process:
//   launches/10000_on_current          checked (or not, per the process's configuration)
//   launches/10000_on_current/paused   the checker paused (streamlike_check_set_paused), and
//   launches/10000_on_current/paused_again (control);
//   launches/10000_on_current/floor    every call subscribed, each callback returning at once
//                                      (streamlike_check_set_paused(2)): CUPTI's floor, paired
//                                      with the checked row in the same process;
// registered only where the checker runs, as are the repeats, launches on the legacy default
// stream while a non-blocking stream is current, from one call site:
//   launches/10000_reported_repeats    each a repeat of a reported site (wrong stream)
//   launches/10000_allowed_repeats     each a repeat of a site the allow-list takes (made in
//                                      libstreamcheck_launches_allowed.so: lib:streamcheck_launches_allowed)
// GPU only: exits 77 without a device.
#include "gpu_bench.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <benchmark/benchmark.h>

#include <cstdlib>

#include <dlfcn.h>

/// bench/streamcheck_launches_allowed.cu: `count` launches on `stream` from that library.
extern "C" void streamcheck_allowed_launches(int count, cudaStream_t stream);

namespace {

__global__ void empty_kernel() {}

constexpr int launches = 10000;
constexpr int settle_launches = 100;

// The checker's pause, from the library the driver loaded (CUDA_INJECTION64_PATH, loaded local to
// itself, so looked up in it); nullptr where it is not loaded or not running.
using pause_fn = int (*)(int);
pause_fn set_paused = nullptr;

pause_fn find_checker_pause() {
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  void* checker = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  auto* found =
      checker != nullptr ? reinterpret_cast<pause_fn>(dlsym(checker, "streamlike_check_set_paused")) : nullptr;
  return found != nullptr && found(0) >= 0 ? found : nullptr; // resumed: -1 where it is not running
}

// One stream for every row and repetition: a new stream may land on another hardware queue, whose
// pace differs by more than the checker costs, so rows compared with each other share one.
const streamlike::unique_stream& the_stream() {
  static const auto s = streamlike::unique_stream::create(); // non-blocking
  return s;
}

// streamlike_check_set_paused's states.
constexpr int checking = 0;
constexpr int paused = 1;
constexpr int idle = 2;

void launch_loop(benchmark::State& state, int checker_state) {
  const auto& s = the_stream();
  const streamlike::scoped_current_stream current{s}; // every launch checked against a set stream
  for (auto _ : state) {
    // The switch, untimed: its cost depends on the state the row before left (a real switch or
    // none), which would fall on the rows unevenly; a few launches after it settle the queue.
    state.PauseTiming();
    if (set_paused != nullptr) set_paused(checker_state);
    for (int i = 0; i < settle_launches; ++i) empty_kernel<<<1, 1, 0, s.get()>>>();
    (void)cudaStreamSynchronize(s.get());
    state.ResumeTiming();
    for (int i = 0; i < launches; ++i) empty_kernel<<<1, 1, 0, s.get()>>>();
    (void)cudaStreamSynchronize(s.get());
  }
  if (set_paused != nullptr) set_paused(checking);
  state.counters["launches"] = launches;
  if (cudaGetLastError() != cudaSuccess) state.SkipWithError("a launch failed");
}

// Launches on the legacy default stream while a non-blocking stream is current, from one call
// site: a wrong stream however the checker's ordering model judges (nothing orders the legacy
// stream with the current one, which has no work), so a report the first time, then repeats.
void repeat_loop(benchmark::State& state, bool allowed) {
  const streamlike::scoped_current_stream current{the_stream()};
  for (auto _ : state) {
    if (allowed) {
      streamcheck_allowed_launches(launches, nullptr);
    } else {
      for (int i = 0; i < launches; ++i) empty_kernel<<<1, 1, 0, nullptr>>>();
    }
    (void)cudaStreamSynchronize(nullptr);
  }
  state.counters["launches"] = launches;
  if (cudaGetLastError() != cudaSuccess) state.SkipWithError("a launch failed");
}

void register_rows() {
  const auto row = [](const char* name, int checker_state) {
    benchmark::RegisterBenchmark(name, [checker_state](benchmark::State& state) { launch_loop(state, checker_state); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  };
  row("launches/10000_on_current", checking);
  if (set_paused == nullptr) return;
  row("launches/10000_on_current/paused", paused);
  row("launches/10000_on_current/paused_again", paused);
  row("launches/10000_on_current/floor", idle);
  const auto repeats = [](const char* name, bool allowed) {
    benchmark::RegisterBenchmark(name, [allowed](benchmark::State& state) { repeat_loop(state, allowed); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  };
  repeats("launches/10000_reported_repeats", false);
  repeats("launches/10000_allowed_repeats", true);
}

} // namespace

int main(int argc, char** argv) {
  if (!bench_gpu::device_present("streamcheck_launches")) return bench_gpu::skip_status;
  set_paused = find_checker_pause(); // the driver loaded the checker when device_present asked it
  register_rows();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
