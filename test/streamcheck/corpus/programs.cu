// streamcheck's C++ corpus: each shape a real bug (`bug`) and its fix (`fixed`), run under
// libstreamlike_check.so by corpus.py, which asserts the reports. Each bug is made in a function
// of its own, so the report's native frames name it: the functions have external linkage and the
// program is linked -rdynamic (a function of an anonymous namespace is not in the dynamic symbol
// table), and compiled without sibling calls (a tail call would leave the function's frame).
//   programs SHAPE bug|fixed     exit 77 without a CUDA device
#include "../../gpu/device_presence.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>

#include <dlfcn.h>

namespace {

__global__ void touch(int* p) {
  if (p != nullptr) *p += 1;
}

} // namespace

namespace corpus {

// A library that ignores the caller's current stream (the hard-coded stream 0 of many extensions).
__attribute__((noinline)) void library_launch_on_stream_zero(int* data) { touch<<<1, 1>>>(data); }
__attribute__((noinline)) void library_launch_on_current(int* data) {
  touch<<<1, 1, 0, streamlike::current_stream().get()>>>(data);
}
__attribute__((noinline)) void library_copy_on_stream_zero(int* device, const int* host) {
  (void)cudaMemcpyAsync(device, host, sizeof(int), cudaMemcpyHostToDevice, nullptr);
}
__attribute__((noinline)) void library_copy_on_current(int* device, const int* host) {
  (void)cudaMemcpyAsync(device, host, sizeof(int), cudaMemcpyHostToDevice, streamlike::current_stream().get());
}
// Allocation deep inside someone else's code, during a capture.
__attribute__((noinline)) void library_allocates_with_cuda_malloc() {
  void* p = nullptr;
  if (cudaMalloc(&p, 256) == cudaSuccess) (void)cudaFree(p);
  (void)cudaGetLastError();
}
__attribute__((noinline)) void library_allocates_on_stream(cudaStream_t s) {
  void* p = nullptr;
  if (cudaMallocAsync(&p, 256, s) == cudaSuccess) (void)cudaFreeAsync(p, s);
}
// The stream-ordered allocator's classic: memory allocated on the caller's stream, freed on stream 0,
// which does not wait for the caller's (non-blocking) stream that still uses it.
__attribute__((noinline)) void library_frees_on_stream_zero(void* p) { (void)cudaFreeAsync(p, nullptr); }
__attribute__((noinline)) void library_frees_on_current(void* p) {
  (void)cudaFreeAsync(p, streamlike::current_stream().get());
}
__attribute__((noinline)) void library_synchronizes(cudaStream_t other) {
  (void)cudaStreamSynchronize(other);
  (void)cudaGetLastError();
}

} // namespace corpus

namespace {

using namespace corpus;

bool is(const char* a, const char* b) { return std::strcmp(a, b) == 0; }

// The checker's pause, from the library the driver loaded (CUDA_INJECTION64_PATH, loaded local to
// itself, so looked up in it); nullptr, said on stderr, where it is not loaded.
using pause_fn = int (*)(int);
pause_fn checker_pause() {
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  void* checker = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  auto* found =
      checker != nullptr ? reinterpret_cast<pause_fn>(dlsym(checker, "streamlike_check_set_paused")) : nullptr;
  if (found == nullptr) std::fprintf(stderr, "programs: the checker is not loaded (CUDA_INJECTION64_PATH)\n");
  return found;
}

int run(const char* shape, bool bug) {
  // Created streams: a default-constructed unique_stream owns none (it is the moved-from state).
  const streamlike::unique_stream s = streamlike::unique_stream::create();
  const streamlike::unique_stream other = streamlike::unique_stream::create();
  int* data = nullptr;
  static int host = 1;
  if (cudaMalloc(&data, sizeof(int)) != cudaSuccess) return 1;
  if (is(shape, "launch-on-stream-zero")) {
    const streamlike::scoped_current_stream current{s};
    bug ? library_launch_on_stream_zero(data) : library_launch_on_current(data);
  } else if (is(shape, "copy-on-stream-zero")) {
    const streamlike::scoped_current_stream current{s};
    bug ? library_copy_on_stream_zero(data, &host) : library_copy_on_current(data, &host);
  } else if (is(shape, "malloc-in-capture")) {
    cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeGlobal);
    bug ? library_allocates_with_cuda_malloc() : library_allocates_on_stream(s.get());
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(s.get(), &graph) == cudaSuccess) cudaGraphDestroy(graph);
  } else if (is(shape, "sync-in-capture")) {
    if (!bug) library_synchronizes(other.get()); // before the capture
    cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeGlobal);
    touch<<<1, 1, 0, s.get()>>>(data);
    if (bug) library_synchronizes(other.get());
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(s.get(), &graph) == cudaSuccess) cudaGraphDestroy(graph);
  } else if (is(shape, "malloc-beside-global-capture")) {
    // Another thread's global capture prohibits cudaMalloc here, unless this thread is relaxed.
    cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeGlobal);
    std::thread([bug] {
      cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
      if (!bug) cudaThreadExchangeStreamCaptureMode(&mode);
      library_allocates_with_cuda_malloc();
      if (!bug) cudaThreadExchangeStreamCaptureMode(&mode);
    }).join();
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(s.get(), &graph) == cudaSuccess) cudaGraphDestroy(graph);
  } else if (is(shape, "free-async-on-stream-zero")) {
    const streamlike::scoped_current_stream current{s};
    void* p = nullptr;
    if (cudaMallocAsync(&p, sizeof(int), s.get()) != cudaSuccess) return 1;
    (void)cudaMemsetAsync(p, 0, sizeof(int), s.get());
    touch<<<1, 1, 0, s.get()>>>(static_cast<int*>(p));
    bug ? library_frees_on_stream_zero(p) : library_frees_on_current(p);
  } else if (is(shape, "sync-of-another-threads-capture")) {
    // Two captures at once, each thread its own, both relaxed (so no rule of interaction modes
    // applies): this thread's ends, and the other thread's stream, still capturing, is synchronized.
    std::promise<void> begun;
    std::promise<void> release;
    std::thread other_capture([&] {
      cudaStreamBeginCapture(other.get(), cudaStreamCaptureModeRelaxed);
      touch<<<1, 1, 0, other.get()>>>(data);
      begun.set_value();
      release.get_future().wait();
      cudaGraph_t graph = nullptr;
      if (cudaStreamEndCapture(other.get(), &graph) == cudaSuccess) cudaGraphDestroy(graph);
    });
    cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeRelaxed);
    touch<<<1, 1, 0, s.get()>>>(data);
    begun.get_future().wait();
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(s.get(), &graph) == cudaSuccess) cudaGraphDestroy(graph);
    if (bug) library_synchronizes(other.get());
    release.set_value();
    other_capture.join();
    if (!bug) library_synchronizes(other.get()); // after the other thread's capture ended
  } else if (is(shape, "capture-begun-while-paused")) {
    // Paused, a wrong-stream launch goes unchecked and a capture begun is still followed: resumed,
    // a breaker of that capture is named.
    const auto set_paused = checker_pause();
    if (set_paused == nullptr) return 3;
    const streamlike::scoped_current_stream current{s};
    set_paused(1);
    library_launch_on_stream_zero(data);
    cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeGlobal);
    set_paused(0);
    touch<<<1, 1, 0, s.get()>>>(data);
    if (bug) library_synchronizes(other.get());
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(s.get(), &graph) == cudaSuccess) cudaGraphDestroy(graph);
  } else {
    std::fprintf(stderr, "programs: unknown shape '%s'\n", shape);
    return 2;
  }
  (void)cudaGetLastError();
  (void)cudaDeviceSynchronize();
  (void)cudaFree(data);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 3 || !(is(argv[2], "bug") || is(argv[2], "fixed"))) {
    std::fprintf(stderr, "usage: programs SHAPE bug|fixed\n");
    return 2;
  }
  int devices = 0;
  if (const int code = gpu_test::check_devices("streamcheck corpus", 1, devices); code >= 0) return code;
  return run(argv[1], is(argv[2], "bug"));
}
