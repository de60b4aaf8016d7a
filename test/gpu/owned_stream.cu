// streamlike/owned_stream.hpp on a device: an exported stream carries what the driver says of it,
// its id (cudaStreamGetId), device, flags, priority, and the id of its context (cuStreamGetCtx +
// cuCtxGetId, asked as a consumer would); a received stream runs work. test/abi/exported_facts.cpp
// checks the same without a GPU, against the fake CUDA.
#include "gpu_support.hpp"

#include <streamlike/c/owned_stream.h>
#include <streamlike/owned_stream.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <cuda.h>
#include <doctest/doctest.h>

namespace {

template <class Fn>
Fn driver_function(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  GPU_REQUIRE_CUDA(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found));
  REQUIRE(found == cudaDriverEntryPointSuccess);
  return reinterpret_cast<Fn>(fn);
}

unsigned long long context_id_of(cudaStream_t stream) {
  const auto get_ctx = driver_function<CUresult (*)(CUstream, CUcontext*)>("cuStreamGetCtx");
  const auto get_id = driver_function<CUresult (*)(CUcontext, unsigned long long*)>("cuCtxGetId");
  CUcontext ctx = nullptr;
  unsigned long long id = 0;
  REQUIRE(get_ctx(stream, &ctx) == CUDA_SUCCESS);
  REQUIRE(get_id(ctx, &id) == CUDA_SUCCESS);
  return id;
}

void check_exported(const streamlike::shared_stream& s) {
  streamlike_owned_stream* owned = streamlike::to_owned_stream(s);
  REQUIRE(owned != nullptr);
  CHECK(owned->handle == static_cast<void*>(s.get()));
  REQUIRE((owned->flags & STREAMLIKE_OWNED_STREAM_HAS_FACTS) != 0);
  int device = -1;
  unsigned int flags = 0;
  int priority = 0;
  GPU_REQUIRE_CUDA(cudaStreamGetDevice(s.get(), &device));
  GPU_REQUIRE_CUDA(cudaStreamGetFlags(s.get(), &flags));
  GPU_REQUIRE_CUDA(cudaStreamGetPriority(s.get(), &priority));
  CHECK(owned->device == device);
  CHECK(((owned->flags & STREAMLIKE_OWNED_STREAM_NON_BLOCKING) != 0) == ((flags & cudaStreamNonBlocking) != 0));
  CHECK(owned->priority == priority);
  CHECK(owned->stream_id == gpu_test::stream_id(s.get()));
  CHECK(owned->context_id != 0);
  CHECK(owned->context_id == context_id_of(s.get()));
  // Received back, the stream is the same one and runs work.
  const streamlike::shared_stream back = streamlike::from_owned_stream(owned);
  CHECK(back == s);
  CHECK(back.id() == s.id());
  back.sync();
}

} // namespace

TEST_CASE("an exported stream carries the driver's context id, stream id, device, flags and priority") {
  int least = 0;
  int greatest = 0;
  GPU_REQUIRE_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  for (const bool non_blocking : {false, true}) {
    for (const int priority : {least, greatest}) {
      INFO("non_blocking ", non_blocking, ", priority ", priority);
      check_exported(streamlike::shared_stream::create({.priority = priority, .non_blocking = non_blocking}));
    }
  }
  cudaStream_t raw = nullptr;
  GPU_REQUIRE_CUDA(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
  check_exported(streamlike::shared_stream::adopt(raw));
  check_exported(streamlike::shared_stream::from_owner(streamlike::unique_stream::create()));
}

TEST_CASE("on every device, the context id is that device's") {
  int count = 0;
  GPU_REQUIRE_CUDA(cudaGetDeviceCount(&count));
  for (int device = 0; device < count; ++device) {
    INFO("device ", device);
    check_exported(streamlike::shared_stream::create({.device = device}));
  }
}
