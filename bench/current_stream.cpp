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
// --frameworks=all (the default) runs the rows above, with both stand-ins loaded. The judged
// ratios need processes of their own, since what is loaded is process-wide (bench/tools/run_all.sh
// runs each):
//   --frameworks=torch [--torch-library=PATH]  torch alone is loaded (the stand-in, or the real
//                                libtorch_cuda.so at PATH on the GPU machine):
//     torch_only/current_stream(0)/{inside,outside}        streamlike::current_stream(0)
//     torch_only/aoti_torch_get_current_cuda_stream/...    torch's own getter called directly in
//                                the same loop (the baseline; <= 1.3x), and ..._again (control)
//     torch_only/scoped_current_stream, .../scoped_current_stream(device 0)   a scope entered and
//                                left on a stream of device 0, its device asked of the stream or
//                                given; shown beside what it is made of (not judged):
//     torch_only/torch_stream_guard   torch's own guard made and deleted (what the scope's torch
//                                provider does), diag/stream_view::device() the stream's device
//   --frameworks=none            nothing is loaded:
//     none/current_stream()      streamlike::current_stream() of the current device, where
//                                nothing is named (no device read: docs/current-stream.md, "Cost")
//     none/current_stream()/in_scope  the same inside a scope (the device read and the scope
//                                rule; shown, not judged)
//     none/scoped_current_stream(device 0)  a scope entered and left with streamlike's own
//                                provider alone (shown)
//     none/cuCtxGetDevice        the driver's current device (the baseline; <= 1.5x), and
//                                none/cuCtxGetDevice_again (control)
//   In both, .../copy/... rows: the same current_stream() called in a second copy of streamlike
//   (bench/current_stream_copy.cpp, loaded RTLD_LOCAL as an extension module is), which forwards to
//   the process's registry this program's copy published (the shared registry; judged against the
//   same baselines):
//     torch_only/copy/current_stream(0)/{inside,outside}, none/copy/current_stream()
//
// Instruction counts (deterministic, no GPU): bench/tools/current_stream_instructions.py BUILD runs
// each row under callgrind with the fake CUDA preloaded, collecting inside current_stream() only,
// and divides by the calls.
#include <streamlike/c/current_stream_provider.h>
#include <streamlike/c/current_stream_registry.h>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>

#include <benchmark/benchmark.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <dlfcn.h>

namespace bench_current {

/// The stand-ins' setters (test/fake_frameworks/), found after loading them.
using torch_set_fn = std::int32_t (*)(void* stream, std::int32_t device);
torch_set_fn torch_set = nullptr;
using torch_guard_create_fn = std::int32_t (*)(void* stream, std::int32_t device, void** guard);
using torch_guard_delete_fn = std::int32_t (*)(void* guard);
torch_guard_create_fn torch_guard_create = nullptr;
torch_guard_delete_fn torch_guard_delete = nullptr;

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
  streamlike_current_stream_provider p = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
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

// --- torch alone, and nothing loaded ---------------------------------------------------------------

using torch_get_fn = std::int32_t (*)(std::int32_t device, void** stream);
torch_get_fn torch_get = nullptr;

/// A stream for torch to name inside its block: a real one where CUDA (or the fake) can make one,
/// since the real torch looks the handle up; a made-up handle for the stand-in elsewhere.
void* stream_for_torch() {
  static void* const made = [] {
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
      (void)cudaGetLastError();
      return a_stream;
    }
    return static_cast<void*>(s);
  }();
  return made;
}

/// Runs `body` per iteration with torch naming a stream (inside) or its default stream (outside).
template <class Body>
void torch_only_loop(benchmark::State& state, bool inside, Body body) {
  if (torch_get == nullptr || torch_set == nullptr) {
    state.SkipWithError("libtorch_cuda.so (its getter and setter) did not load");
    return;
  }
  (void)torch_set(inside ? stream_for_torch() : nullptr, 0);
  for (auto _ : state) body();
  (void)torch_set(nullptr, 0);
}

void torch_only_current_stream(benchmark::State& state, bool inside) {
  torch_only_loop(state, inside, [] { benchmark::DoNotOptimize(streamlike::current_stream(0)); });
}

/// The second copy's current_stream() (bench/current_stream_copy.cpp), found after loading it.
using copy_current_fn = void* (*)(int device);
copy_current_fn copy_current = nullptr;

void torch_only_copy_current_stream(benchmark::State& state, bool inside) {
  copy_current_fn volatile f = copy_current; // called through a pointer, as torch's getter is
  torch_only_loop(state, inside, [f] { benchmark::DoNotOptimize(f(0)); });
}

void torch_only_direct(benchmark::State& state, bool inside) {
  torch_get_fn volatile get = torch_get; // called through a pointer, as a program that dlsym'd it does
  torch_only_loop(state, inside, [get] {
    void* stream = nullptr;
    benchmark::DoNotOptimize(get(0, &stream));
    benchmark::DoNotOptimize(stream);
  });
}

/// A scope entered and left on torch's stream, its device given (device >= 0) or the stream's.
void torch_only_scope(benchmark::State& state, int device) {
  torch_only_loop(state, false, [device] {
    const streamlike::stream_view stream{static_cast<cudaStream_t>(stream_for_torch())};
    if (device >= 0) {
      const streamlike::scoped_current_stream scope{stream, device};
    } else {
      const streamlike::scoped_current_stream scope{stream};
    }
  });
}

void torch_only_guard(benchmark::State& state) {
  if (torch_guard_create == nullptr || torch_guard_delete == nullptr) {
    state.SkipWithError("libtorch_cuda.so has no aoti_torch_create_cuda_stream_guard");
    return;
  }
  torch_only_loop(state, false, [] {
    void* guard = nullptr;
    benchmark::DoNotOptimize(torch_guard_create(stream_for_torch(), 0, &guard));
    benchmark::DoNotOptimize(torch_guard_delete(guard));
  });
}

void stream_device(benchmark::State& state) {
  const streamlike::stream_view stream{static_cast<cudaStream_t>(stream_for_torch())};
  try {
    (void)stream.device();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(stream.device());
}

void none_scope(benchmark::State& state) {
  if (!current_device_readable()) {
    state.SkipWithError("the current device cannot be read here (no driver or GPU; preload the fake CUDA)");
    return;
  }
  const streamlike::stream_view stream{static_cast<cudaStream_t>(stream_for_torch())};
  for (auto _ : state) {
    const streamlike::scoped_current_stream scope{stream, 0};
  }
}

void none_current_stream(benchmark::State& state) {
  if (!current_device_readable()) {
    state.SkipWithError("the current device cannot be read here (no driver or GPU; preload the fake CUDA)");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(streamlike::current_stream());
}

void none_copy_current_stream(benchmark::State& state) {
  if (!current_device_readable()) {
    state.SkipWithError("the current device cannot be read here (no driver or GPU; preload the fake CUDA)");
    return;
  }
  copy_current_fn volatile f = copy_current;
  for (auto _ : state) benchmark::DoNotOptimize(f(-1));
}

void none_current_stream_in_scope(benchmark::State& state) {
  if (!current_device_readable()) {
    state.SkipWithError("the current device cannot be read here (no driver or GPU; preload the fake CUDA)");
    return;
  }
  const streamlike::scoped_current_stream scope{streamlike::stream_view::per_thread_default()};
  for (auto _ : state) benchmark::DoNotOptimize(streamlike::current_stream());
}

} // namespace bench_current

namespace {

/// The value of `--name=VALUE` in argv, removed from it (Google Benchmark refuses what it does not
/// know); `fallback` where absent.
std::string take_flag(int& argc, char** argv, const std::string& name, const std::string& fallback) {
  const std::string prefix = "--" + name + "=";
  std::string value = fallback;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]).substr(0, prefix.size()) == prefix)
      value = argv[i] + prefix.size();
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  argv[argc] = nullptr;
  return value;
}

void register_all_rows() {
  using namespace bench_current;
  benchmark::RegisterBenchmark("current/device_0/outside", device_0_outside);
  benchmark::RegisterBenchmark("current/device_0/inside", device_0_inside);
  benchmark::RegisterBenchmark("current/current_device/outside", current_device_outside);
  benchmark::RegisterBenchmark("current/current_device/inside", current_device_inside);
  benchmark::RegisterBenchmark("registered/device_0/outside", registered_device_0_outside);
  benchmark::RegisterBenchmark("diag/fake_provider_get", fake_provider_get);
  benchmark::RegisterBenchmark("diag/cudaGetDevice", runtime_get_device);
  benchmark::RegisterBenchmark("diag/cuCtxGetDevice", driver_ctx_get_device);
}

void register_torch_only_rows() {
  using namespace bench_current;
  for (const bool inside : {true, false}) {
    const std::string where = inside ? "/inside" : "/outside";
    benchmark::RegisterBenchmark(("torch_only/current_stream(0)" + where).c_str(),
                                 [inside](benchmark::State& st) { torch_only_current_stream(st, inside); });
    benchmark::RegisterBenchmark(("torch_only/aoti_torch_get_current_cuda_stream" + where).c_str(),
                                 [inside](benchmark::State& st) { torch_only_direct(st, inside); });
    benchmark::RegisterBenchmark(("torch_only/aoti_torch_get_current_cuda_stream_again" + where).c_str(),
                                 [inside](benchmark::State& st) { torch_only_direct(st, inside); });
    if (copy_current != nullptr) {
      benchmark::RegisterBenchmark(("torch_only/copy/current_stream(0)" + where).c_str(),
                                   [inside](benchmark::State& st) { torch_only_copy_current_stream(st, inside); });
    }
  }
  benchmark::RegisterBenchmark("torch_only/scoped_current_stream",
                               [](benchmark::State& st) { torch_only_scope(st, -1); });
  benchmark::RegisterBenchmark("torch_only/scoped_current_stream(device 0)",
                               [](benchmark::State& st) { torch_only_scope(st, 0); });
  benchmark::RegisterBenchmark("torch_only/torch_stream_guard", torch_only_guard);
  benchmark::RegisterBenchmark("diag/stream_view::device()", stream_device);
}

void register_no_framework_rows() {
  using namespace bench_current;
  benchmark::RegisterBenchmark("none/current_stream()", none_current_stream);
  if (copy_current != nullptr) benchmark::RegisterBenchmark("none/copy/current_stream()", none_copy_current_stream);
  benchmark::RegisterBenchmark("none/current_stream()/in_scope", none_current_stream_in_scope);
  benchmark::RegisterBenchmark("none/scoped_current_stream(device 0)", none_scope);
  benchmark::RegisterBenchmark("none/cuCtxGetDevice", driver_ctx_get_device);
  benchmark::RegisterBenchmark("none/cuCtxGetDevice_again", driver_ctx_get_device);
}

} // namespace

int main(int argc, char** argv) {
  using namespace bench_current;
  const std::string frameworks = take_flag(argc, argv, "frameworks", "all");
  const std::string torch_library = take_flag(argc, argv, "torch-library", BENCH_FAKE_TORCH);
  if (frameworks != "all" && frameworks != "torch" && frameworks != "none") {
    std::fprintf(stderr, "current_stream: --frameworks must be all, torch or none, got '%s'\n", frameworks.c_str());
    return 2;
  }
  // The frameworks, loaded as torch and tvm-ffi are: streamlike finds them.
  if (frameworks != "none") {
    void* torch = dlopen(torch_library.c_str(), RTLD_NOW | (frameworks == "torch" ? RTLD_GLOBAL : RTLD_LOCAL));
    if (torch == nullptr) {
      std::fprintf(stderr, "current_stream: %s\n", dlerror());
    } else {
      torch_set = reinterpret_cast<torch_set_fn>(dlsym(torch, "torch_set_current_cuda_stream"));
      torch_get = reinterpret_cast<torch_get_fn>(dlsym(torch, "aoti_torch_get_current_cuda_stream"));
      torch_guard_create = reinterpret_cast<torch_guard_create_fn>(dlsym(torch, "aoti_torch_create_cuda_stream_guard"));
      torch_guard_delete = reinterpret_cast<torch_guard_delete_fn>(dlsym(torch, "aoti_torch_delete_cuda_stream_guard"));
    }
  }
  if (frameworks == "all" && dlopen(BENCH_FAKE_TVM_FFI, RTLD_NOW | RTLD_LOCAL) == nullptr)
    std::fprintf(stderr, "current_stream: %s\n", dlerror());
  if (cudaSetDevice(0) != cudaSuccess) (void)cudaGetLastError(); // a current context, as torch code has
  if (frameworks != "all") {
    // A second copy, loaded after this program's copy published the registry: it forwards.
    void* copy = dlopen(BENCH_COPY, RTLD_NOW | RTLD_LOCAL);
    if (copy == nullptr) {
      std::fprintf(stderr, "current_stream: %s (no copy/ rows)\n", dlerror());
    } else {
      using registry_fn = const void* (*)();
      const auto registry = reinterpret_cast<registry_fn>(dlsym(copy, "bench_copy_registry"));
      copy_current = reinterpret_cast<copy_current_fn>(dlsym(copy, "bench_copy_current_stream"));
      if (registry == nullptr || copy_current == nullptr || registry() != streamlike_current_stream_registry_table()) {
        std::fprintf(stderr, "current_stream: the second copy does not share this program's registry\n");
        return 1;
      }
    }
  }
  if (frameworks == "all") register_all_rows();
  if (frameworks == "torch") register_torch_only_rows();
  if (frameworks == "none") register_no_framework_rows();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // What a process of that kind has loaded, checked after the rows: a row must not measure a
  // process that is not the one it names.
  const auto names = streamlike::current_stream_providers();
  const bool has_torch = std::any_of(names.begin(), names.end(), [](const auto& p) { return p.name == "torch"; });
  const bool has_tvm = std::any_of(names.begin(), names.end(), [](const auto& p) { return p.name == "tvm-ffi"; });
  if ((frameworks == "none" && (has_torch || has_tvm)) || (frameworks == "torch" && (!has_torch || has_tvm))) {
    std::fprintf(stderr, "current_stream: --frameworks=%s, but streamlike found torch=%d tvm-ffi=%d\n",
                 frameworks.c_str(), int{has_torch}, int{has_tvm});
    return 1;
  }
  return 0;
}
