// The CUDA program every consumer project builds next to consumer.cpp: a .cu file compiled by nvcc
// with nothing but what the route carries (no -std= of its own: nvcc defaults to C++17, and
// streamlike's headers need C++20, which the route must bring). It launches a kernel on a stream
// taken through stream_like. Without a device it prints the same handles as consumer.cpp and says
// that the launch was skipped; with one it also launches on a created shared_stream and waits.
#include <streamlike/streamlike.hpp>

#include <cstdio>
#include <utility>

#ifndef STREAMLIKE_CONSUMER
#  define STREAMLIKE_CONSUMER "unknown build system"
#endif

// What the route must have carried, checked where nvcc compiles: C++20 in the host pass and in the
// device pass alike, and the vocabulary usable from a .cu file.
static_assert(__cplusplus >= 202002L, "the route did not carry -std=c++20 to nvcc");
static_assert(streamlike::stream_like<cudaStream_t>);
static_assert(streamlike::stream_like<const streamlike::shared_stream&>);
static_assert(!streamlike::stream_like<int>);

namespace {

__global__ void write_answer(int* out) { *out = 42; }

// A library function that takes any stream: the edge where streamlike converts, once.
template <streamlike::stream_like S>
streamlike::stream_view launch_on(S&& stream, int* out) {
  const streamlike::stream_view view = streamlike::get_stream(std::forward<S>(stream));
  std::printf("streamlike consumer (%s): stream handle %p\n", STREAMLIKE_CONSUMER, static_cast<void*>(view.get()));
  if (out != nullptr) {
    write_answer<<<1, 1, 0, view>>>(out);
  }
  return view;
}

} // namespace

int main() {
  const auto legacy = launch_on(streamlike::stream_view::legacy_default(), nullptr);
  const streamlike::shared_stream shared = streamlike::shared_stream::per_thread_default();
  const auto per_thread = launch_on(shared, nullptr);
  if (legacy.get() != cudaStreamLegacy || per_thread.get() != cudaStreamPerThread) {
    std::printf("streamlike consumer (%s): WRONG HANDLES\n", STREAMLIKE_CONSUMER);
    return 1;
  }
  int devices = 0;
  const cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0) {
    std::printf("streamlike consumer (%s): no CUDA device (%s): kernel launch skipped\n", STREAMLIKE_CONSUMER,
                probe != cudaSuccess ? cudaGetErrorName(probe) : "0 devices");
    std::printf("streamlike consumer (%s): ok\n", STREAMLIKE_CONSUMER);
    return 0;
  }
  int* answer = nullptr;
  if (cudaMallocManaged(&answer, sizeof(int)) != cudaSuccess) {
    std::printf("streamlike consumer (%s): cudaMallocManaged failed\n", STREAMLIKE_CONSUMER);
    return 1;
  }
  *answer = 0;
  const auto created = streamlike::shared_stream::create();
  launch_on(created, answer);
  created.sync();
  const bool ok = *answer == 42;
  cudaFree(answer);
  std::printf("streamlike consumer (%s): kernel on a created stream: %s\n", STREAMLIKE_CONSUMER,
              ok ? "wrote 42" : "WRONG RESULT");
  std::printf("streamlike consumer (%s): %s\n", STREAMLIKE_CONSUMER, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
