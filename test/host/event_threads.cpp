// One streamlike::event recorded on one thread while another syncs, queries and reads it: what an
// event shared between Python threads sees (the package releases the GIL in sync()). Against the
// fake CUDA of test/fake_cuda (fake_cuda.h), so that it runs without a GPU, and under
// ThreadSanitizer (scripts/sanitize tsan), which reports a data race on what the event remembers of
// its last record (capture_id()) if that is not atomic. (Which record a concurrent sync() waits for
// is the caller's race, not the library's: CUDA's answer is one or the other.)
#include "../fake_cuda/fake_cuda.h"

#include <streamlike/error.hpp>
#include <streamlike/event.hpp>
#include <streamlike/stream_view.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <thread>

namespace {

cudaStream_t new_stream() {
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  return stream;
}

} // namespace

TEST_CASE("one event recorded on one thread and synced on another: two threads, no race") {
  REQUIRE(fake_cuda_present() == 1);
  const cudaStream_t stream = new_stream();
  streamlike::event e = streamlike::event::create();
  e.record(streamlike::stream_view{stream});
  constexpr int rounds = 2000;
  std::atomic<bool> recording{true};
  std::atomic<int> answered{0};
  // Each record() writes what the event remembers of its capture (none here) while sync() and
  // is_done() read it: without an atomic, ThreadSanitizer reports the pair.
  std::thread recorder([&] {
    for (int i = 0; i < rounds; ++i) e.record(streamlike::stream_view{stream});
    recording = false;
  });
  std::thread syncer([&] {
    do {
      e.sync();
      if (e.is_done()) ++answered;
      CHECK(e.capture_id() == 0);
    } while (recording);
  });
  recorder.join();
  syncer.join();
  CHECK(answered > 0);
  CHECK(fake_cuda_calls("cuEventRecord") + fake_cuda_calls("cudaEventRecord") >= rounds);
  CHECK(fake_cuda_invalidations() == 0);
  CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}
