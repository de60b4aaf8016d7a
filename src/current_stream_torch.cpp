// torch's current stream, through its stable C shim in the already-loaded libtorch_cuda.so
// (torch/csrc/inductor/aoti_torch/c/shim.h and torch/csrc/stable/c/shim.h):
//   AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream);
//   AOTITorchError torch_set_current_cuda_stream(void* stream, int32_t device_index);
// (AOTITorchError is int32_t, 0 on success; exceptions inside torch become a nonzero code.) Both
// are c10::cuda::getCurrentCUDAStream / setCurrentCUDAStream(getStreamFromExternal(...)): a
// thread-local per device, no CUDA call that a capture forbids. Older torch has only the getter
// (then the provider is read-only) or an aoti_torch_set_current_cuda_stream of the same shape.
//
// torch's current stream is more than a handle: a stream set from a handle becomes an "external"
// stream whose id is the handle, so a pool stream put back by handle would no longer compare equal
// to itself (torch.cuda.current_stream() == s). Scopes therefore enter and leave through torch's
// own guard, which puts back the very stream object:
//   AOTITorchError aoti_torch_create_cuda_stream_guard(void* stream, int32_t device_index,
//                                                      CUDAStreamGuardHandle* ret_guard);
//   AOTITorchError aoti_torch_delete_cuda_stream_guard(CUDAStreamGuardHandle guard);
// (a c10::cuda::CUDAStreamGuard). The guard also makes the stream's device current for its life,
// so it is used only where that device is already current; elsewhere enter falls back to get+set.
#include "devices.hpp"
#include "current_stream_dl_lookup.hpp"
#include "current_stream_registry.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <new>

namespace streamlike::detail::providers {
namespace {

using current::torch_get_fn;
using torch_set_fn = std::int32_t (*)(void* stream, std::int32_t device_index);

using torch_guard_create_fn = std::int32_t (*)(void* stream, std::int32_t device_index, void** ret_guard);
using torch_guard_delete_fn = std::int32_t (*)(void* guard);

struct torch_functions {
  torch_get_fn get = nullptr;
  torch_set_fn set = nullptr;
  torch_guard_create_fn create_guard = nullptr;
  torch_guard_delete_fn delete_guard = nullptr;
};

/// What enter hands to leave: torch's guard itself where the stream's device was current (the
/// usual case: nothing allocated), else the previous stream in a `previous_stream` (another device
/// was current) whose address carries a set low bit. Both are torch's or our allocations, whose low
/// bit is otherwise clear, so the bit tells them apart.
struct previous_stream {
  void* handle;
};
constexpr std::uintptr_t previous_tag = 1;

torch_functions torch_found; // written by the one thread looking, until found; published after

/// The handle torch calls `stream`: torch's default stream is the handle 0 (stream id 0), and the
/// handle cudaStreamLegacy handed to it would become an external stream of id 1 that every torch
/// op refuses ("invalid StreamId1"). The same stream, in torch's name for it.
void* torch_handle(void* stream) noexcept { return stream == static_cast<void*>(cudaStreamLegacy) ? nullptr : stream; }

int torch_get(void* context, std::int32_t device, void** stream) {
  const auto* f = static_cast<const torch_functions*>(context);
  return f->get(device, stream) == 0 ? STREAMLIKE_CURRENT_STREAM_OK : STREAMLIKE_CURRENT_STREAM_FAILED;
}

int torch_set(void* context, std::int32_t device, void* stream) {
  const auto* f = static_cast<const torch_functions*>(context);
  return f->set(torch_handle(stream), device) == 0 ? STREAMLIKE_CURRENT_STREAM_OK : STREAMLIKE_CURRENT_STREAM_FAILED;
}

int torch_enter(void* context, std::int32_t device, void* stream, void** token) {
  const auto* f = static_cast<const torch_functions*>(context);
  stream = torch_handle(stream);
  if (devices::current_or_minus_one_driver_first() == device) {
    void* guard = nullptr;
    if (f->create_guard(stream, device, &guard) != 0) return STREAMLIKE_CURRENT_STREAM_FAILED;
    *token = guard;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
  if (f->set == nullptr) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE; // cannot set on another device: left alone
  auto* previous = new (std::nothrow) previous_stream{nullptr};
  if (previous == nullptr) return STREAMLIKE_CURRENT_STREAM_FAILED;
  if (f->get(device, &previous->handle) != 0 || f->set(stream, device) != 0) {
    delete previous;
    return STREAMLIKE_CURRENT_STREAM_FAILED;
  }
  *token = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(previous) | previous_tag);
  return STREAMLIKE_CURRENT_STREAM_OK;
}

int torch_leave(void* context, std::int32_t device, void* token) {
  const auto* f = static_cast<const torch_functions*>(context);
  const auto bits = reinterpret_cast<std::uintptr_t>(token);
  if ((bits & previous_tag) != 0) {
    auto* previous = reinterpret_cast<previous_stream*>(bits & ~previous_tag);
    const bool ok = f->set(previous->handle, device) == 0;
    delete previous;
    return ok ? STREAMLIKE_CURRENT_STREAM_OK : STREAMLIKE_CURRENT_STREAM_FAILED;
  }
  // Deleting torch's guard also puts back the device that was current when it was made; a scope is
  // device-neutral (with or without torch loaded), so the device current now stays.
  const int before = devices::current_or_minus_one_driver_first();
  const bool ok = f->delete_guard(token) == 0;
  if (before >= 0 && devices::current_or_minus_one_driver_first() != before && cudaSetDevice(before) != cudaSuccess)
    (void)cudaGetLastError();
  return ok ? STREAMLIKE_CURRENT_STREAM_OK : STREAMLIKE_CURRENT_STREAM_FAILED;
}

} // namespace

bool find_torch(streamlike_current_stream_provider& out, current::direct_get& direct) noexcept {
  void* lib = loaded_library("libtorch_cuda.so");
  if (lib == nullptr) return false;
  torch_found.get = function_in<torch_get_fn>(lib, "aoti_torch_get_current_cuda_stream");
  if (torch_found.get == nullptr) return false;
  torch_found.set = function_in<torch_set_fn>(lib, "torch_set_current_cuda_stream");
  if (torch_found.set == nullptr)
    torch_found.set = function_in<torch_set_fn>(lib, "aoti_torch_set_current_cuda_stream");
  torch_found.create_guard = function_in<torch_guard_create_fn>(lib, "aoti_torch_create_cuda_stream_guard");
  torch_found.delete_guard = function_in<torch_guard_delete_fn>(lib, "aoti_torch_delete_cuda_stream_guard");
  out = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
  out.priority = STREAMLIKE_CURRENT_STREAM_PRIORITY_TORCH;
  out.name = "torch";
  out.context = &torch_found;
  out.get = &torch_get;
  direct = current::direct_get{current::direct_kind::torch, torch_found.get, nullptr};
  out.set = torch_found.set != nullptr ? &torch_set : nullptr;
  if (torch_found.create_guard != nullptr && torch_found.delete_guard != nullptr) {
    out.enter = &torch_enter;
    out.leave = &torch_leave;
  }
  return true;
}

} // namespace streamlike::detail::providers
