// streamlike/default_stream.hpp on a device: the handle 0 means the legacy default stream in one
// translation unit and the per-thread default stream in another (compiled with
// --default-stream per-thread), in one program, and resolve_default agrees with what the CUDA
// runtime itself does with 0 in each. The two TUs are the two copies of default_stream_tu.cu.
#include "default_stream_tu.hpp"
#include "gpu_support.hpp"

#include <streamlike/default_stream.hpp>

#include <doctest/doctest.h>

#include <thread>

namespace {

using gpu_test::stream_id;

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

TEST_CASE("this TU (legacy mode) agrees with the legacy copy") {
  CHECK_FALSE(streamlike::default_stream_is_per_thread);
  CHECK(streamlike::default_stream() == streamlike::stream_view::legacy_default());
  gpu_test::check_runs_on(cudaStreamLegacy, streamlike::resolve_default(streamlike::stream_view{cudaStream_t{}}));
}
