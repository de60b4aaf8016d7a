// The query checks shared by stream_view_queries.cu and multi_gpu.cu: stream_view's live
// queries and shared_stream's cached facts (device, id, flags, priority) against the raw CUDA
// calls. Header-only; links with gpu_support.
#ifndef STREAMLIKE_TEST_GPU_QUERY_CHECKS_HPP
#define STREAMLIKE_TEST_GPU_QUERY_CHECKS_HPP

#include "gpu_support.hpp"

#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <string>

namespace gpu_test {

struct raw_facts {
  int device = -1;
  unsigned long long id = 0;
  unsigned int flags = 99;
  int priority = 99;
};

inline raw_facts raw_query(cudaStream_t handle) {
  raw_facts f;
  GPU_REQUIRE_CUDA(cudaStreamGetDevice(handle, &f.device));
  GPU_REQUIRE_CUDA(cudaStreamGetId(handle, &f.id));
  GPU_REQUIRE_CUDA(cudaStreamGetFlags(handle, &f.flags));
  GPU_REQUIRE_CUDA(cudaStreamGetPriority(handle, &f.priority));
  return f;
}

// stream_view's live queries against the raw calls.
inline void check_view_agrees(streamlike::stream_view view, const std::string& what) {
  INFO(what);
  const raw_facts raw = raw_query(view.get());
  CHECK(view.device() == raw.device);
  CHECK(view.id() == raw.id);
  CHECK(view.flags() == raw.flags);
  CHECK(view.priority() == raw.priority);
}

// shared_stream's cached facts against the raw calls (and so against the live view).
inline void check_shared_agrees(const streamlike::shared_stream& s, const std::string& what) {
  INFO(what);
  check_view_agrees(s.view(), what);
  const raw_facts raw = raw_query(s.get());
  CHECK(s.device() == raw.device);
  CHECK(s.id() == raw.id);
  CHECK(s.flags() == raw.flags);
  CHECK(s.priority() == raw.priority);
}

} // namespace gpu_test

#endif // STREAMLIKE_TEST_GPU_QUERY_CHECKS_HPP
