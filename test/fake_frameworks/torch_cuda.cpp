// A stand-in for libtorch_cuda.so: the functions of torch's stable C shim that streamlike's torch
// provider finds (src/current_stream_torch.cpp), over a thread-local current stream per device as
// c10 keeps it. Built as libtorch_cuda.so (its soname is what streamlike looks for) and loaded by
// the programs that want torch's provider found and called as with torch itself
// (test/host/current_stream_frameworks.cpp, bench/current_stream.cpp); no library path points here.
//
// Like c10, it keeps what it was handed: the handle cudaStreamLegacy (0x1) given to it is what
// torch would turn into an external stream of id 1, which every torch op then refuses ("invalid
// StreamId1"); torch's own default stream is the handle 0.
#include <cstdint>
#include <new>

namespace {
constexpr std::int32_t devices = 64;
thread_local void* current[devices] = {};

/// c10::cuda::CUDAStreamGuard: the stream it replaced, put back when deleted.
struct guard {
  std::int32_t device;
  void* previous;
};
} // namespace

#define FAKE_TORCH_API extern "C" __attribute__((visibility("default")))

FAKE_TORCH_API std::int32_t aoti_torch_get_current_cuda_stream(std::int32_t device, void** stream) {
  if (device < 0 || device >= devices) return 1;
  *stream = current[device];
  return 0;
}

FAKE_TORCH_API std::int32_t torch_set_current_cuda_stream(void* stream, std::int32_t device) {
  if (device < 0 || device >= devices) return 1;
  current[device] = stream;
  return 0;
}

FAKE_TORCH_API std::int32_t aoti_torch_create_cuda_stream_guard(void* stream, std::int32_t device, void** ret_guard) {
  if (device < 0 || device >= devices || ret_guard == nullptr) return 1;
  auto* g = new (std::nothrow) guard{device, current[device]};
  if (g == nullptr) return 1;
  current[device] = stream;
  *ret_guard = g;
  return 0;
}

FAKE_TORCH_API std::int32_t aoti_torch_delete_cuda_stream_guard(void* handle) {
  auto* g = static_cast<guard*>(handle);
  if (g == nullptr) return 1;
  current[g->device] = g->previous;
  delete g;
  return 0;
}
