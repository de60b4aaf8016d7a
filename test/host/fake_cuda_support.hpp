// What the host programs that run against the fake CUDA (test/fake_cuda/fake_cuda.h) share: a
// non-blocking stream made through the runtime, the invalidations the fake recorded, and the calls
// a piece of work makes. Header-only (inline).
#ifndef STREAMLIKE_TEST_HOST_FAKE_CUDA_SUPPORT_HPP
#define STREAMLIKE_TEST_HOST_FAKE_CUDA_SUPPORT_HPP

#include "../fake_cuda/fake_cuda.h"

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <map>
#include <string>

namespace host_test {

// A new non-blocking stream of the fake (the caller destroys it).
inline cudaStream_t new_stream() {
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  return stream;
}

// The calls the fake recorded as invalidating a capture since its log was last reset, joined.
inline std::string invalidations() {
  std::string names;
  for (std::size_t i = 0; i < fake_cuda_invalidations(); ++i) {
    names += names.empty() ? "" : ", ";
    names += fake_cuda_invalidation(i);
  }
  return names;
}

// CUDA calls by name, and how often each was made.
using calls = std::map<std::string, long>;

// The calls `work` makes, by name. It runs once before, so that what is asked once per process
// (the driver's entry points, the device's priority range, its primary context, a cached event)
// is asked then.
inline calls calls_of(const std::function<void()>& work) {
  work();
  fake_cuda_reset_log();
  work();
  calls made;
  for (std::size_t i = 0; const char* name = fake_cuda_called(i); ++i) made[name] = fake_cuda_calls(name);
  return made;
}

} // namespace host_test

#endif
