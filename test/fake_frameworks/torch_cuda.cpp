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

#include <dlfcn.h>

namespace {
constexpr std::int32_t devices = 64;
thread_local void* current[devices] = {};

/// c10::cuda::CUDAStreamGuard: the stream it replaced and the device that was current, both put
/// back when deleted.
struct guard {
  std::int32_t device;
  void* previous;
  int original_device;
};

/// The CUDA runtime's device calls of whatever CUDA the process has (the fake CUDA in the host
/// tests), found at run time so that this library links no CUDA; -1 / nothing where there is none.
using get_device_fn = int (*)(int*);
using set_device_fn = int (*)(int);

int current_device() {
  static const auto get = reinterpret_cast<get_device_fn>(dlsym(RTLD_DEFAULT, "cudaGetDevice"));
  int device = -1;
  return get != nullptr && get(&device) == 0 ? device : -1;
}

void set_device(int device) {
  static const auto set = reinterpret_cast<set_device_fn>(dlsym(RTLD_DEFAULT, "cudaSetDevice"));
  if (set != nullptr && device >= 0) (void)set(device);
}
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
  auto* g = new (std::nothrow) guard{device, current[device], current_device()};
  if (g == nullptr) return 1;
  set_device(device); // as c10's guard: the stream's device is current for the guard's life
  current[device] = stream;
  *ret_guard = g;
  return 0;
}

FAKE_TORCH_API std::int32_t aoti_torch_delete_cuda_stream_guard(void* handle) {
  auto* g = static_cast<guard*>(handle);
  if (g == nullptr) return 1;
  current[g->device] = g->previous;
  set_device(g->original_device);
  delete g;
  return 0;
}
