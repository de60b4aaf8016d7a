// The start of every doctest program of the gpu suite (gpu_main.cpp's main, and the multi-GPU
// program's own): find the devices (device_presence.hpp: skip only without one), load the
// shared kernels on each and measure whether work queued behind a running kernel waits for it
// (gpu_support.hpp: concurrency; raw calls, as no doctest check may run before doctest's Context
// exists), then run the test cases.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "device_presence.hpp"
#include "gpu_support.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib> // setenv (POSIX)

namespace gpu_test {

int run_suite(int argc, char** argv, int devices_needed) {
  // Every kernel is loaded when the context is made, not at its first launch: CUDA 13 loads
  // modules lazily, and a first launch made while a gate kernel spins waited for that kernel (on
  // the H200, the first observe_kernel behind a closed gate ran only at the gate's timeout). Set
  // before the first CUDA call; a value in the environment wins.
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  int devices = 0;
  if (const int exit_code = check_devices("gpu suite", devices_needed, devices); exit_code >= 0) return exit_code;
  cudaDeviceProp prop{};
  if (const cudaError_t code = cudaGetDeviceProperties(&prop, 0); code != cudaSuccess) {
    std::fprintf(stderr, "gpu suite: FAIL: cudaGetDeviceProperties(0): %s\n", cudaGetErrorName(code));
    return 1;
  }
  std::fprintf(stderr, "gpu suite: %d device(s); running on device 0: %s (sm_%d%d)\n", devices, prop.name, prop.major,
               prop.minor);
  for (int device = 0; device < devices; ++device) {
    if (const cudaError_t code = load_kernels(device); code != cudaSuccess) {
      std::fprintf(stderr, "gpu suite: FAIL: loading the test kernels on device %d: %s\n", device,
                   cudaGetErrorName(code));
      return 1;
    }
  }
  if (const cudaError_t code = cudaSetDevice(0); code != cudaSuccess) {
    std::fprintf(stderr, "gpu suite: FAIL: cudaSetDevice(0): %s\n", cudaGetErrorName(code));
    return 1;
  }
  const concurrency& measured = measure_concurrency();
  if (!measured.why.empty()) {
    std::fprintf(stderr, "gpu suite: the checks that need it are skipped, each saying so: %s\n", measured.why.c_str());
  }
  doctest::Context context(argc, argv);
  return context.run();
}

} // namespace gpu_test
