// bench/current_stream.cpp: what streamlike::current_stream() costs on its own, with providers of
// known cost standing in for the frameworks (no framework, no GPU needed for the device-0 rows).
// The figure judged on the GPU machine is bench/python/bench_current_stream.py's (torch's real
// provider); this program shows where the time of one call goes.
//
// The providers are the GPU machine's: streamlike's built-in torch and tvm-ffi providers, which
// find stand-ins for libtorch_cuda.so and libtvm_ffi.so (test/fake_frameworks/, a thread-local
// read each) that this program loads first, and streamlike's own. Benchmark names:
//   current/device_0/outside     current_stream(0): torch and tvm-ffi name the default stream,
//                                so all three providers are asked
//   current/device_0/inside      torch names a stream (inside torch.cuda.stream(s)): one asked
//   current/current_device/...   the same for the current device (current_stream()): adds the
//                                current device's lookup. Skipped where the current device cannot
//                                be read (no driver, no GPU); with the fake CUDA of
//                                test/fake_cuda preloaded they run against it
//   registered/device_0/outside  a fourth provider registered by hand (through its table) that
//                                also names the default stream
//   diag/fake_provider_get       a registered provider's get, called directly: the floor per
//                                provider
//   diag/cudaGetDevice           the runtime's current device
//   diag/cuCtxGetDevice          the driver's device of the current context, through the entry
//                                point cudart hands out
//
// Instruction counts (deterministic, no GPU): bench/tools/current_stream_instructions.py BUILD runs
// each row under callgrind with the fake CUDA preloaded, collecting inside current_stream() only,
// and divides by the calls.
#include <streamlike/c/current_stream_provider.h>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>

#include <benchmark/benchmark.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include <dlfcn.h>

namespace bench_current {

/// The stand-ins' setters (test/fake_frameworks/), found after loading them.
using torch_set_fn = std::int32_t (*)(void* stream, std::int32_t device);
torch_set_fn torch_set = nullptr;

/// A framework's current stream: a thread-local per device.
template <int N>
struct fake_framework {
  static thread_local std::array<void*, 8> current;
  static int get(void*, std::int32_t device, void** stream) {
    *stream = static_cast<std::size_t>(device) < current.size() ? current[static_cast<std::size_t>(device)] : nullptr;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
  static int set(void*, std::int32_t device, void* stream) {
    if (static_cast<std::size_t>(device) >= current.size()) return STREAMLIKE_CURRENT_STREAM_FAILED;
    current[static_cast<std::size_t>(device)] = stream;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
};
template <int N>
thread_local std::array<void*, 8> fake_framework<N>::current{};

using first = fake_framework<1>;

streamlike_current_stream_provider table(const char* name, std::int32_t priority,
                                         int (*get)(void*, std::int32_t, void**),
                                         int (*set)(void*, std::int32_t, void*)) {
  streamlike_current_stream_provider p{};
  p.version = STREAMLIKE_CURRENT_STREAM_PROVIDER_VERSION;
  p.struct_size = sizeof p;
  p.priority = priority;
  p.name = name;
  p.get = get;
  p.set = set;
  return p;
}

void* const a_stream = reinterpret_cast<void*>(std::uintptr_t{0x5000});

bool current_device_readable() {
  try {
    (void)streamlike::current_stream();
    return true;
  } catch (...) {
    return false;
  }
}

int device_of_the_thread() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return device;
}

void current_stream_loop(benchmark::State& state, int device, bool inside) {
  if (device == streamlike::current_device && !current_device_readable()) {
    state.SkipWithError("the current device cannot be read here (no driver or GPU; preload the fake CUDA)");
    return;
  }
  if (torch_set == nullptr) {
    state.SkipWithError("the stand-in for libtorch_cuda.so did not load");
    return;
  }
  const int index = device == streamlike::current_device ? device_of_the_thread() : device;
  (void)torch_set(inside ? a_stream : nullptr, index);
  for (auto _ : state) benchmark::DoNotOptimize(streamlike::current_stream(device));
  (void)torch_set(nullptr, index);
}

void device_0_outside(benchmark::State& state) { current_stream_loop(state, 0, false); }
void device_0_inside(benchmark::State& state) { current_stream_loop(state, 0, true); }
void current_device_outside(benchmark::State& state) { current_stream_loop(state, streamlike::current_device, false); }
void current_device_inside(benchmark::State& state) { current_stream_loop(state, streamlike::current_device, true); }

void registered_device_0_outside(benchmark::State& state) {
  streamlike::register_current_stream_provider(table("fake", 300, &first::get, &first::set));
  current_stream_loop(state, 0, false);
  (void)streamlike::unregister_current_stream_provider("fake");
}

void fake_provider_get(benchmark::State& state) {
  int (*volatile get)(void*, std::int32_t, void**) = &first::get; // called as the registry does
  for (auto _ : state) {
    void* stream = nullptr;
    benchmark::DoNotOptimize(get(nullptr, 0, &stream));
    benchmark::DoNotOptimize(stream);
  }
}

void runtime_get_device(benchmark::State& state) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    state.SkipWithError("cudaGetDevice fails here (no driver or GPU)");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(cudaGetDevice(&device));
    benchmark::DoNotOptimize(device);
  }
}

void driver_ctx_get_device(benchmark::State& state) {
  using get_device_fn = CUresult (*)(CUdevice*);
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CUdevice device = 0;
  if (cudaGetDriverEntryPointByVersion("cuCtxGetDevice", &address, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || reinterpret_cast<get_device_fn>(address)(&device) != CUDA_SUCCESS) {
    (void)cudaGetLastError();
    state.SkipWithError("cuCtxGetDevice cannot answer here (no driver, or no current context)");
    return;
  }
  const auto get_device = reinterpret_cast<get_device_fn>(address);
  for (auto _ : state) {
    benchmark::DoNotOptimize(get_device(&device));
    benchmark::DoNotOptimize(device);
  }
}

} // namespace bench_current

BENCHMARK(bench_current::device_0_outside)->Name("current/device_0/outside");
BENCHMARK(bench_current::device_0_inside)->Name("current/device_0/inside");
BENCHMARK(bench_current::current_device_outside)->Name("current/current_device/outside");
BENCHMARK(bench_current::current_device_inside)->Name("current/current_device/inside");
BENCHMARK(bench_current::registered_device_0_outside)->Name("registered/device_0/outside");
BENCHMARK(bench_current::fake_provider_get)->Name("diag/fake_provider_get");
BENCHMARK(bench_current::runtime_get_device)->Name("diag/cudaGetDevice");
BENCHMARK(bench_current::driver_ctx_get_device)->Name("diag/cuCtxGetDevice");

int main(int argc, char** argv) {
  using namespace bench_current;
  // The stand-ins for the frameworks, loaded as torch and tvm-ffi are: streamlike finds them.
  void* torch = dlopen(BENCH_FAKE_TORCH, RTLD_NOW | RTLD_LOCAL);
  void* tvm_ffi = dlopen(BENCH_FAKE_TVM_FFI, RTLD_NOW | RTLD_LOCAL);
  if (torch == nullptr || tvm_ffi == nullptr) std::fprintf(stderr, "current_stream: %s\n", dlerror());
  if (torch != nullptr) torch_set = reinterpret_cast<torch_set_fn>(dlsym(torch, "torch_set_current_cuda_stream"));
  if (cudaSetDevice(0) != cudaSuccess) (void)cudaGetLastError(); // a current context, as torch code has
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
