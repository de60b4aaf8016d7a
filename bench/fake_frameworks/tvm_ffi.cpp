// A stand-in for libtvm_ffi.so in bench/current_stream: TVMFFIEnvGetStream / TVMFFIEnvSetStream
// (apache-tvm-ffi's c_env_api.h), over a thread-local per device type and device. Built as
// libtvm_ffi.so and loaded by the benchmark only (see torch_cuda.cpp).
#include <cstdint>

namespace {
constexpr std::int32_t devices = 64;
thread_local void* current[devices] = {}; // kDLCUDA only
} // namespace

extern "C" __attribute__((visibility("default"))) void* TVMFFIEnvGetStream(std::int32_t device_type,
                                                                           std::int32_t device) {
  return device_type == 2 && device >= 0 && device < devices ? current[device] : nullptr;
}

extern "C" __attribute__((visibility("default"))) int TVMFFIEnvSetStream(std::int32_t device_type, std::int32_t device,
                                                                         void* stream, void** original) {
  if (device_type != 2 || device < 0 || device >= devices) return -1;
  if (original != nullptr) *original = current[device];
  current[device] = stream;
  return 0;
}
