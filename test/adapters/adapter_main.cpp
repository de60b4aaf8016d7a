// The doctest main of the adapter tests. Each adapter's program holds host cases and, in the
// doctest test suite "gpu", cases that need a device. Meson runs every program twice: without the
// gpu cases (`-tse=gpu`, runs anywhere) and with only them (`-ts=gpu`), where a machine without a
// usable device exits 77, which meson reports as SKIP rather than as a pass.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string_view>

int main(int argc, char** argv) {
  constexpr int skip = 77;
  bool gpu_only = false;
  for (int i = 1; i < argc; ++i) gpu_only = gpu_only || std::string_view(argv[i]) == "-ts=gpu";
  if (gpu_only) {
    int devices = 0;
    const cudaError_t code = cudaGetDeviceCount(&devices);
    if (code != cudaSuccess || devices == 0) {
      const cudaError_t why = code != cudaSuccess ? code : cudaErrorNoDevice;
      std::fprintf(stderr, "adapters (gpu cases): no CUDA device (%s: %s): skipping (exit %d)\n", cudaGetErrorName(why),
                   cudaGetErrorString(why), skip);
      return skip;
    }
  }
  doctest::Context context(argc, argv);
  return context.run();
}
