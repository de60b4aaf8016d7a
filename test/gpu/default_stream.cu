// streamlike/default_stream.hpp on a device: the handle 0 means the legacy default stream in one
// translation unit and the per-thread default stream in another (compiled with
// --default-stream per-thread), in one program, and resolve_default agrees with what the CUDA
// runtime itself does with 0 in each. The two TUs are the two copies of default_stream_tu.cu.
#include "default_stream_tu.hpp"
#include "gpu_support.hpp"

#include <streamlike/default_stream.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

namespace {

using gpu_test::stream_id;

// Polls `done` until it holds or `limit` passes; true if it held.
template <class Predicate>
bool eventually(Predicate done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

} // namespace

TEST_CASE("both modes meet in one program, each with its own reading of 0") {
  // One definition per mode (inline namespaces): had the linker merged them, both would answer alike.
  CHECK_FALSE(legacy_tu::default_stream_is_per_thread());
  CHECK(per_thread_tu::default_stream_is_per_thread());

  CHECK(legacy_tu::resolve_zero() == cudaStreamLegacy);
  CHECK(per_thread_tu::resolve_zero() == cudaStreamPerThread);
  CHECK(legacy_tu::from_address_zero() == cudaStreamLegacy);
  CHECK(per_thread_tu::from_address_zero() == cudaStreamPerThread);
  CHECK(legacy_tu::is_legacy_default_zero());
  CHECK_FALSE(legacy_tu::is_per_thread_default_zero());
  CHECK(per_thread_tu::is_per_thread_default_zero());
  CHECK_FALSE(per_thread_tu::is_legacy_default_zero());
}

TEST_CASE("resolve_default(0) is the stream the runtime uses for 0 in the same TU (cudaStreamGetId)") {
  const unsigned long long legacy_id = stream_id(cudaStreamLegacy);
  const unsigned long long per_thread_id = stream_id(cudaStreamPerThread);
  REQUIRE(legacy_id != per_thread_id); // two different streams, or nothing below means anything

  unsigned long long id = 0;
  GPU_REQUIRE_CUDA(per_thread_tu::runtime_id_of_zero(&id));
  CHECK(id == per_thread_id);
  CHECK(stream_id(per_thread_tu::resolve_zero()) == id);

  GPU_REQUIRE_CUDA(legacy_tu::runtime_id_of_zero(&id));
  CHECK(id == legacy_id);
  CHECK(stream_id(legacy_tu::resolve_zero()) == id);
}

TEST_CASE("the per-thread TU's 0 is a different stream on each host thread; the legacy TU's is not") {
  unsigned long long main_per_thread = 0, main_legacy = 0;
  GPU_REQUIRE_CUDA(per_thread_tu::runtime_id_of_zero(&main_per_thread));
  GPU_REQUIRE_CUDA(legacy_tu::runtime_id_of_zero(&main_legacy));

  unsigned long long worker_per_thread = 0, worker_legacy = 0, worker_resolved = 0;
  cudaError_t worker_codes[3] = {};
  std::thread([&] {
    worker_codes[0] = per_thread_tu::runtime_id_of_zero(&worker_per_thread);
    worker_codes[1] = legacy_tu::runtime_id_of_zero(&worker_legacy);
    // resolve_default hands out the explicit cudaStreamPerThread: on this thread, this thread's stream.
    worker_codes[2] = cudaStreamGetId(per_thread_tu::resolve_zero(), &worker_resolved);
  }).join();
  for (cudaError_t code : worker_codes) REQUIRE(code == cudaSuccess);

  CHECK(worker_per_thread != main_per_thread);
  CHECK(worker_resolved == worker_per_thread);
  CHECK(worker_legacy == main_legacy);
}

TEST_CASE("a kernel launched on 0 runs on the stream resolve_default names, in each TU") {
  // This thread's per-thread default stream is held by a gate. Then, from another thread:
  //  - the per-thread TU's 0 is that thread's own per-thread stream, which does not wait for ours:
  //    its kernel runs at once;
  //  - the legacy TU's 0 is the legacy stream, which waits for every blocking stream, ours
  //    included: its kernel is held.
  // Had either TU read 0 the other way, the opposite would happen.
  gpu_test::mapped_ints out{3};
  gpu_test::gate g; // declared after `out`: destroyed (opened) first
  GPU_REQUIRE_CUDA(g.close(cudaStreamPerThread));

  cudaError_t worker_codes[2] = {};
  std::thread([&] {
    worker_codes[0] = per_thread_tu::launch_write_on_zero(out.device() + 0, 1);
    worker_codes[1] = legacy_tu::launch_write_on_zero(out.device() + 1, 2);
  }).join();
  REQUIRE(worker_codes[0] == cudaSuccess);
  REQUIRE(worker_codes[1] == cudaSuccess);
  // On this thread, the per-thread TU's 0 is the held stream itself.
  GPU_REQUIRE_CUDA(per_thread_tu::launch_write_on_zero(out.device() + 2, 3));

  CHECK_MESSAGE(eventually([&] { return out.read(0) == 1; }, std::chrono::milliseconds(5000)),
                "the per-thread TU's launch on 0 from another thread was held by this thread's stream");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_MESSAGE(out.read(1) == 0, "the legacy TU's launch on 0 did not wait for this thread's per-thread stream");
  CHECK_MESSAGE(out.read(2) == 0, "the per-thread TU's launch on 0 on this thread was not behind the gate");
  CHECK(cudaStreamQuery(legacy_tu::resolve_zero()) == cudaErrorNotReady);
  CHECK(cudaStreamQuery(per_thread_tu::resolve_zero()) == cudaErrorNotReady);

  g.open();
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(per_thread_tu::resolve_zero()));
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(legacy_tu::resolve_zero()));
  CHECK_FALSE(g.timed_out());
  CHECK(out.read(1) == 2);
  CHECK(out.read(2) == 3);
}

TEST_CASE("this TU (legacy mode) agrees with the legacy copy") {
  CHECK_FALSE(streamlike::default_stream_is_per_thread);
  CHECK(streamlike::default_stream() == streamlike::stream_view::legacy_default());
  gpu_test::check_runs_on(cudaStreamLegacy, streamlike::resolve_default(streamlike::stream_view{cudaStream_t{}}));
}
