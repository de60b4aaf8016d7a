// streamcheck's question at a capture's beginning, against the fake CUDA (whose cuStreamGetFlags
// invalidates a capture, as CUDA 13's does): whether the stream is blocking, answered without
// invalidating a capture under way on it, and without a query for the default streams.
#include "../../src/streamcheck/stream_blocking.hpp"

#include "../fake_cuda/fake_cuda.h"

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <initializer_list>

using streamlike::check::stream_flag_queries;
using streamlike::check::stream_is_blocking;

namespace {

// A driver function of the fake, as the checker looks it up in libcuda.
template <class Fn>
Fn driver(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  REQUIRE(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status) == cudaSuccess);
  REQUIRE_MESSAGE(fn != nullptr, name, " is not faked");
  return reinterpret_cast<Fn>(fn);
}

stream_flag_queries fake_queries() {
  stream_flag_queries q;
  q.is_capturing = driver<decltype(q.is_capturing)>("cuStreamIsCapturing");
  q.get_flags = driver<decltype(q.get_flags)>("cuStreamGetFlags");
  return q;
}

CUstream new_stream(unsigned int flags) {
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, flags) == cudaSuccess);
  return reinterpret_cast<CUstream>(s);
}

} // namespace

TEST_CASE("a stream's flags are read before its capture begins") {
  REQUIRE(fake_cuda_present() == 1);
  const stream_flag_queries q = fake_queries();
  const CUstream blocking = new_stream(cudaStreamDefault);
  const CUstream non_blocking = new_stream(cudaStreamNonBlocking);
  fake_cuda_reset_log();
  CHECK(stream_is_blocking(q, blocking));
  CHECK_FALSE(stream_is_blocking(q, non_blocking));
  CHECK(fake_cuda_calls("cuStreamGetFlags") == 2);
  CHECK(fake_cuda_invalidations() == 0);
}

TEST_CASE("a stream already capturing is not asked its flags: asking would invalidate the capture") {
  const stream_flag_queries q = fake_queries();
  const CUstream capturing = new_stream(cudaStreamNonBlocking);
  for (const int mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed}) {
    CAPTURE(mode);
    REQUIRE(fake_cuda_set_capture(capturing, fake_cuda_active, mode) == 0);
    fake_cuda_reset_log();
    CHECK(stream_is_blocking(q, capturing)); // unknown: the cautious answer
    CHECK(fake_cuda_calls("cuStreamGetFlags") == 0);
    CHECK(fake_cuda_invalidations() == 0);
    CHECK(fake_cuda_capture_status(capturing) == fake_cuda_active);
  }
  REQUIRE(fake_cuda_set_capture(capturing, fake_cuda_none, 0) == 0);
}

TEST_CASE("the default streams are blocking without a query; without the driver's functions, blocking") {
  const stream_flag_queries q = fake_queries();
  fake_cuda_reset_log();
  CHECK(stream_is_blocking(q, nullptr));
  CHECK(stream_is_blocking(q, CU_STREAM_LEGACY));
  CHECK(stream_is_blocking(q, CU_STREAM_PER_THREAD));
  CHECK(fake_cuda_calls("cuStreamIsCapturing") == 0);
  CHECK(fake_cuda_calls("cuStreamGetFlags") == 0);
  CHECK(stream_is_blocking(stream_flag_queries{}, new_stream(cudaStreamNonBlocking)));
}
