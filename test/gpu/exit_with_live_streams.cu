// A program that returns from main with streamlike objects still alive; the test passes if the
// process exits 0 (no crash, no abort, no hang while the CUDA runtime tears down).
//
// Alive at exit:
//  - namespace-scope shared_streams and a stream_pool, constructed (empty) before main: their
//    destructors run after the CUDA runtime's own exit handlers, which it registers at its first
//    call, in main; they meet a runtime that is unloading (cudaErrorCudartUnloading);
//  - function-local statics made in main: destroyed before those handlers, while the runtime is
//    still up;
//  - the main thread's event cache of wait(), a thread_local, used; another thread's, released
//    at that thread's exit;
//  - a kernel still running on a stream destroyed after main.
// Without a device it exits 77 (meson's SKIP), like the doctest programs of the suite.
#include "device_presence.hpp"

#include <streamlike/error.hpp>
#include <streamlike/export_stream.hpp>
#include <streamlike/ordering.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_pool.hpp>
#include <streamlike/unique_stream.hpp>

#include <cuda_runtime.h>

#include <cstdio>
#include <exception>
#include <optional>
#include <thread>

namespace {

streamlike::shared_stream global_stream;
streamlike::shared_stream global_adopted;
std::optional<streamlike::stream_pool> global_pool;

__global__ void spin(unsigned long long ns) {
  unsigned long long start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (unsigned long long now = start; now - start < ns;) {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  }
}

} // namespace

int main() {
  int devices = 0;
  if (const int exit_code = gpu_test::check_devices("exit_with_live_streams", 1, devices); exit_code >= 0) {
    return exit_code;
  }
  try {
    global_stream = streamlike::shared_stream::create();
    cudaStream_t raw{};
    if (const cudaError_t code = cudaStreamCreate(&raw); code != cudaSuccess)
      throw streamlike::error(code, "cudaStreamCreate");
    global_adopted = streamlike::shared_stream::adopt(raw);
    global_pool.emplace(16);

    static const streamlike::shared_stream local_static = streamlike::shared_stream::create();
    static streamlike::stream_pool local_pool{4};
    static const streamlike::shared_stream exported =
        streamlike::export_stream(streamlike::unique_stream::create({.non_blocking = false}));

    // This thread's event cache, used with every kind of stream above.
    streamlike::wait(global_stream, local_static);
    streamlike::wait(local_static, global_pool->at(3)); // at(): a reference (get()'s temporary would not be viewable)
    streamlike::wait(exported, local_pool.at(0));
    streamlike::wait(global_adopted, global_stream);
    // Another thread's cache, released when it exits.
    std::thread([] { streamlike::wait(local_pool.at(1), global_stream); }).join();

    // Still running when main returns; its stream is destroyed after the runtime's exit handlers.
    spin<<<1, 1, 0, global_stream.get()>>>(50'000'000ull);
    if (const cudaError_t code = cudaGetLastError(); code != cudaSuccess) throw streamlike::error(code, "spin<<<>>>");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exit_with_live_streams: FAIL: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "exit_with_live_streams: returning from main with streams, a pool, event caches and a "
                       "running kernel alive\n");
  return 0;
}
