// How every program of the gpu suite decides, at start, whether it can run: it skips (exit 77,
// meson's SKIP) only when the machine has no CUDA device; any other failure to reach the devices
// is a failure. Header-only (exit_with_live_streams.cu has its own main and no gpu_support).
//  - no device: cudaGetDeviceCount says cudaErrorNoDevice or a count of 0, or no CUDA driver is
//    installed at all (libcuda.so.1 cannot be loaded, so the runtime answers
//    cudaErrorInsufficientDriver: a machine without a GPU, such as CI);
//  - anything else (a driver too old for the runtime, a device the driver cannot open, ...) is a
//    failure, so a GPU machine with a broken driver does not read "all skipped";
//  - STREAMLIKE_REQUIRE_GPU=1 turns "no device" into a failure too, for runs meant for a GPU
//    machine;
//  - a program that needs more devices than the machine has (the multi-GPU program) skips.
#ifndef STREAMLIKE_TEST_GPU_DEVICE_PRESENCE_HPP
#define STREAMLIKE_TEST_GPU_DEVICE_PRESENCE_HPP

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gpu_test {

constexpr int skip_exit_code = 77; // meson's exit code for a skipped test

// Whether the CUDA driver library can be loaded at all.
inline bool cuda_driver_installed() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return false;
  dlclose(driver);
  return true;
}

inline bool gpu_required() {
  const char* value = std::getenv("STREAMLIKE_REQUIRE_GPU");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

// Checks the devices for `program`, which needs `needed` of them. Returns -1 when the program can
// run (and sets `devices`), else the exit code it must return: 77 to skip, 1 to fail. Says why on
// stderr either way.
inline int check_devices(const char* program, int needed, int& devices) {
  devices = 0;
  const cudaError_t code = cudaGetDeviceCount(&devices);
  (void)cudaGetLastError();
  bool none = false;
  char why[256];
  if (code == cudaSuccess && devices == 0) {
    none = true;
    std::snprintf(why, sizeof why, "cudaGetDeviceCount says 0 devices");
  } else if (code == cudaErrorNoDevice) {
    none = true;
    std::snprintf(why, sizeof why, "cudaGetDeviceCount says cudaErrorNoDevice");
  } else if (code == cudaErrorInsufficientDriver && !cuda_driver_installed()) {
    none = true;
    std::snprintf(why, sizeof why,
                  "no CUDA driver is installed: libcuda.so.1 cannot be loaded, cudaGetDeviceCount says %s",
                  cudaGetErrorName(code));
  } else if (code != cudaSuccess) {
    std::fprintf(stderr,
                 "%s: FAIL: cudaGetDeviceCount failed with %s (%s): a CUDA driver is installed but the devices "
                 "cannot be reached; only a machine without a device skips\n",
                 program, cudaGetErrorName(code), cudaGetErrorString(code));
    devices = 0;
    return 1;
  }
  if (none) {
    devices = 0;
    if (gpu_required()) {
      std::fprintf(stderr, "%s: FAIL: no CUDA device (%s), and STREAMLIKE_REQUIRE_GPU=1 asks for one\n", program, why);
      return 1;
    }
    std::fprintf(stderr, "%s: no CUDA device (%s): skipping (exit %d; STREAMLIKE_REQUIRE_GPU=1 makes it a failure)\n",
                 program, why, skip_exit_code);
    return skip_exit_code;
  }
  if (devices < needed) {
    std::fprintf(stderr, "%s: %d CUDA device(s), this program needs %d: skipping (exit %d)\n", program, devices, needed,
                 skip_exit_code);
    return skip_exit_code;
  }
  return -1;
}

} // namespace gpu_test

#endif // STREAMLIKE_TEST_GPU_DEVICE_PRESENCE_HPP
