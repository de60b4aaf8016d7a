// bench/gpu_bench.hpp: what the GPU benchmark programs share: the device check that lets them
// skip cleanly on a machine without one, the context they report, and a bounded queue.
#ifndef STREAMLIKE_BENCH_GPU_BENCH_HPP
#define STREAMLIKE_BENCH_GPU_BENCH_HPP

#include <benchmark/benchmark.h>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace bench_gpu {

/// Exit status of a program that has nothing to measure here (as the gpu test suite's; meson
/// and bench/tools/ratios.py read it as "skipped", bench/tools/run_all.sh prints SKIP).
inline constexpr int skip_status = 77;

/// True when a CUDA device can be used. Otherwise prints why on stderr, naming the CUDA error,
/// and the caller returns skip_status before registering anything.
inline bool device_present(const char* program) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::fprintf(stderr,
                 "%s: no CUDA device (cudaGetDeviceCount: %s: %s): skipped, nothing measured. "
                 "These benchmarks need a GPU; run bench/tools/run_all.sh on a GPU machine.\n",
                 program, status != cudaSuccess ? cudaGetErrorName(status) : "cudaSuccess",
                 status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
    cudaGetLastError();
    return false;
  }
  // Create the primary context now, so no benchmark pays for it.
  if (const cudaError_t init = cudaFree(nullptr); init != cudaSuccess) {
    std::fprintf(stderr, "%s: cannot initialize device 0 (cudaFree(0): %s: %s): skipped, nothing measured.\n", program,
                 cudaGetErrorName(init), cudaGetErrorString(init));
    return false;
  }
  return true;
}

/// Device, driver and runtime in the output's context.
inline void add_device_context() {
  int device = 0;
  cudaGetDevice(&device);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
    benchmark::AddCustomContext("cuda device", std::to_string(device) + ": " + prop.name);
  }
  int count = 0;
  cudaGetDeviceCount(&count);
  benchmark::AddCustomContext("cuda devices", std::to_string(count));
  int driver = 0;
  int runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  benchmark::AddCustomContext("cuda driver / runtime", std::to_string(driver) + " / " + std::to_string(runtime));
}

/// Aborts the run with the CUDA error's name: a benchmark that fails must not report a time.
inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s: %s\n", what, cudaGetErrorName(status), cudaGetErrorString(status));
    std::exit(2);
  }
}

/// The driver function `symbol` (its ABI as of CUDA `version`: 12.0 unless a later one is named,
/// as green contexts need), fetched through cudart as libstreamlike fetches its own; aborts the
/// run if the driver lacks it.
template <class Fn>
Fn driver_entry_point(const char* symbol, unsigned int version = 12000) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found{};
  const std::string what = std::string("cudaGetDriverEntryPointByVersion(") + symbol + ")";
  check(cudaGetDriverEntryPointByVersion(symbol, &address, version, cudaEnableDefault, &found), what.c_str());
  if (found != cudaDriverEntryPointSuccess || address == nullptr) {
    std::fprintf(stderr, "%s found nothing\n", what.c_str());
    std::exit(2);
  }
  return reinterpret_cast<Fn>(address);
}

/// Every `every` iterations, waits (untimed) for what the loop queued on the streams, so the
/// queues stay bounded: a wait or a record is a command the GPU must take off the queue, and a
/// full queue would make the next call block, which would time the GPU, not the call.
inline constexpr long drain_every = 256;

template <class Drain>
inline void drain_untimed(benchmark::State& state, long iteration, Drain&& drain) {
  if (iteration % drain_every == drain_every - 1) {
    state.PauseTiming();
    drain();
    state.ResumeTiming();
  }
}

} // namespace bench_gpu

#endif // STREAMLIKE_BENCH_GPU_BENCH_HPP
