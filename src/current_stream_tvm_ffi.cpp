// tvm-ffi's current stream, through its C API in the already-loaded libtvm_ffi.so
// (include/tvm/ffi/extra/c_env_api.h, apache-tvm-ffi 0.1):
//   TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t device_type, int32_t device_id);
//   int TVMFFIEnvSetStream(int32_t device_type, int32_t device_id, TVMFFIStreamHandle stream,
//                          TVMFFIStreamHandle* opt_out_original_stream);
// TVMFFIStreamHandle is void*; device_type is DLPack's. tvm-ffi keeps a stream per thread, device
// type and device id (NULL until set), no CUDA call; a CUDA device's stream is the one kept for
// kDLCUDA (2), the only device type this provider asks and sets (kDLCUDAHost and kDLCUDAManaged
// name memory, not a device that launches; kDLROCM is not CUDA).
#include "current_stream_registry.hpp"
#include "current_stream_dl_lookup.hpp"

#include <cstdint>

namespace streamlike::detail::providers {
namespace {

constexpr std::int32_t dl_cuda = 2; // DLDeviceType kDLCUDA

using current::tvm_get_fn;
using tvm_set_fn = int (*)(std::int32_t device_type, std::int32_t device_id, void* stream, void** original);

struct tvm_functions {
  tvm_get_fn get = nullptr;
  tvm_set_fn set = nullptr;
};

tvm_functions tvm_found; // written by the one thread looking, until found; published after

int tvm_get(void* context, std::int32_t device, void** stream) {
  *stream = static_cast<const tvm_functions*>(context)->get(dl_cuda, device);
  return STREAMLIKE_CURRENT_STREAM_OK;
}

int tvm_set(void* context, std::int32_t device, void* stream) {
  return static_cast<const tvm_functions*>(context)->set(dl_cuda, device, stream, nullptr) == 0
             ? STREAMLIKE_CURRENT_STREAM_OK
             : STREAMLIKE_CURRENT_STREAM_FAILED;
}

// A scope enters with one call: TVMFFIEnvSetStream hands back the stream it replaced through its
// out-parameter, which is the token (a stream handle, nothing to free); leaving sets it back.
int tvm_enter(void* context, std::int32_t device, void* stream, void** token) {
  void* original = nullptr;
  if (static_cast<const tvm_functions*>(context)->set(dl_cuda, device, stream, &original) != 0)
    return STREAMLIKE_CURRENT_STREAM_FAILED;
  *token = original;
  return STREAMLIKE_CURRENT_STREAM_OK;
}

int tvm_leave(void* context, std::int32_t device, void* token) { return tvm_set(context, device, token); }

} // namespace

bool find_tvm_ffi(streamlike_current_stream_provider& out, current::direct_get& direct) noexcept {
  void* lib = loaded_library("libtvm_ffi.so");
  if (lib == nullptr) return false;
  tvm_found.get = function_in<tvm_get_fn>(lib, "TVMFFIEnvGetStream");
  tvm_found.set = function_in<tvm_set_fn>(lib, "TVMFFIEnvSetStream");
  if (tvm_found.get == nullptr) return false;
  out = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
  out.priority = STREAMLIKE_CURRENT_STREAM_PRIORITY_TVM_FFI;
  out.name = "tvm-ffi";
  out.context = &tvm_found;
  out.get = &tvm_get;
  direct = current::direct_get{current::direct_kind::tvm_ffi, nullptr, tvm_found.get};
  if (tvm_found.set != nullptr) {
    out.set = &tvm_set;
    out.enter = &tvm_enter;
    out.leave = &tvm_leave;
  }
  return true;
}

} // namespace streamlike::detail::providers
