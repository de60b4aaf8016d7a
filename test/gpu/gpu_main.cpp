// The doctest main of every program of the gpu suite. Without a usable CUDA device there is
// nothing to test, so it exits 77, which meson reports as SKIP rather than as a pass or a failure.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdio>

int main(int argc, char** argv) {
  constexpr int skip = 77; // meson's exit code for a skipped test
  int devices = 0;
  const cudaError_t code = cudaGetDeviceCount(&devices);
  if (code != cudaSuccess || devices == 0) {
    const cudaError_t why = code != cudaSuccess ? code : cudaErrorNoDevice;
    std::fprintf(stderr, "gpu suite: no CUDA device present (%s: %s): skipping (exit %d)\n", cudaGetErrorName(why),
                 cudaGetErrorString(why), skip);
    return skip;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    std::fprintf(stderr, "gpu suite: %d device(s); running on device 0: %s (sm_%d%d)\n", devices, prop.name, prop.major,
                 prop.minor);
  }
  doctest::Context context(argc, argv);
  return context.run();
}
