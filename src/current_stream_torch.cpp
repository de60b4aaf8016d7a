// torch's current stream, through its stable C shim in the already-loaded libtorch_cuda.so
// (torch/csrc/inductor/aoti_torch/c/shim.h and torch/csrc/stable/c/shim.h):
//   AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream);
//   AOTITorchError torch_set_current_cuda_stream(void* stream, int32_t device_index);
// (AOTITorchError is int32_t, 0 on success; exceptions inside torch become a nonzero code.) Both
// are c10::cuda::getCurrentCUDAStream / setCurrentCUDAStream(getStreamFromExternal(...)): a
// thread-local per device, no CUDA call that a capture forbids. Older torch has only the getter
// (then the provider is read-only) or an aoti_torch_set_current_cuda_stream of the same shape.
#include "current_stream_registry.hpp"
#include "current_stream_dl_lookup.hpp"

#include <cstdint>

namespace streamlike::detail::providers {
namespace {

using torch_get_fn = std::int32_t (*)(std::int32_t device_index, void** ret_stream);
using torch_set_fn = std::int32_t (*)(void* stream, std::int32_t device_index);

struct torch_functions {
  torch_get_fn get = nullptr;
  torch_set_fn set = nullptr;
};

torch_functions torch_found; // written once, under the registry's lock, before publication

int torch_get(void* context, std::int32_t device, void** stream) {
  const auto* f = static_cast<const torch_functions*>(context);
  return f->get(device, stream) == 0 ? STREAMLIKE_CURRENT_STREAM_OK : STREAMLIKE_CURRENT_STREAM_FAILED;
}

int torch_set(void* context, std::int32_t device, void* stream) {
  const auto* f = static_cast<const torch_functions*>(context);
  return f->set(stream, device) == 0 ? STREAMLIKE_CURRENT_STREAM_OK : STREAMLIKE_CURRENT_STREAM_FAILED;
}

} // namespace

bool find_torch(streamlike_current_stream_provider& out) noexcept {
  void* lib = loaded_library("libtorch_cuda.so");
  if (lib == nullptr) return false;
  torch_found.get = function_in<torch_get_fn>(lib, "aoti_torch_get_current_cuda_stream");
  if (torch_found.get == nullptr) return false;
  torch_found.set = function_in<torch_set_fn>(lib, "torch_set_current_cuda_stream");
  if (torch_found.set == nullptr)
    torch_found.set = function_in<torch_set_fn>(lib, "aoti_torch_set_current_cuda_stream");
  out = streamlike_current_stream_provider{};
  out.version = STREAMLIKE_CURRENT_STREAM_PROVIDER_VERSION;
  out.priority = STREAMLIKE_CURRENT_STREAM_PRIORITY_TORCH;
  out.name = "torch";
  out.context = &torch_found;
  out.get = &torch_get;
  out.set = torch_found.set != nullptr ? &torch_set : nullptr;
  return true;
}

} // namespace streamlike::detail::providers
