// A stand-in for libtorch_cuda.so in bench/current_stream: the two functions of torch's stable C
// shim streamlike's torch provider reads and sets (src/current_stream_torch.cpp), over a
// thread-local per device as c10 keeps it. Built as libtorch_cuda.so (its soname is what
// streamlike looks for) and loaded by the benchmark only, so that the built-in provider is found
// and called as on the GPU machine; no library path points here.
#include <cstdint>

namespace {
constexpr std::int32_t devices = 64;
thread_local void* current[devices] = {};
} // namespace

extern "C" __attribute__((visibility("default"))) std::int32_t aoti_torch_get_current_cuda_stream(std::int32_t device,
                                                                                                  void** stream) {
  if (device < 0 || device >= devices) return 1;
  *stream = current[device];
  return 0;
}

extern "C" __attribute__((visibility("default"))) std::int32_t torch_set_current_cuda_stream(void* stream,
                                                                                             std::int32_t device) {
  if (device < 0 || device >= devices) return 1;
  current[device] = stream;
  return 0;
}
