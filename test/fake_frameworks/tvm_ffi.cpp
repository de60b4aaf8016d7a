// A stand-in for libtvm_ffi.so: TVMFFIEnvGetStream / TVMFFIEnvSetStream (apache-tvm-ffi's
// include/tvm/ffi/extra/c_env_api.h), over a thread-local per device (kDLCUDA only). Built as
// libtvm_ffi.so and loaded by the programs that want tvm-ffi's provider found (see torch_cuda.cpp).
#include <cstdint>

namespace {
constexpr std::int32_t devices = 64;
constexpr std::int32_t dl_cuda = 2; // DLDeviceType kDLCUDA
thread_local void* current[devices] = {};
thread_local long gets = 0; // TVMFFIEnvGetStream calls on this thread
} // namespace

#define FAKE_TVM_FFI_API extern "C" __attribute__((visibility("default")))

FAKE_TVM_FFI_API void* TVMFFIEnvGetStream(std::int32_t device_type, std::int32_t device) {
  ++gets;
  return device_type == dl_cuda && device >= 0 && device < devices ? current[device] : nullptr;
}

FAKE_TVM_FFI_API int TVMFFIEnvSetStream(std::int32_t device_type, std::int32_t device, void* stream, void** original) {
  if (device_type != dl_cuda || device < 0 || device >= devices) return -1;
  if (original != nullptr) *original = current[device];
  current[device] = stream;
  return 0;
}

/// Not tvm-ffi's: how many times this thread called TVMFFIEnvGetStream (for the tests).
FAKE_TVM_FFI_API long fake_tvm_ffi_get_calls() { return gets; }
