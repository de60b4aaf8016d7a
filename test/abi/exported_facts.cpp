// to_owned_stream exports what the driver says of the stream (docs/owned-stream-abi.md): its id,
// device, flags, priority and the id of its context, checked without a GPU against the fake CUDA
// of test/fake_cuda (two devices: STREAMLIKE_FAKE_CUDA_DEVICES=2), asked through the same
// driver entry points a consumer would use. test/gpu/owned_stream.cu checks the same on a device.
#include "../fake_cuda/fake_cuda.h"

#include <streamlike/c/owned_stream.h>
#include <streamlike/owned_stream.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

namespace {

template <class Fn>
Fn driver_function(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  REQUIRE(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) == cudaSuccess);
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

void check_exported(const streamlike::shared_stream& s, int device, int priority, bool non_blocking) {
  streamlike_owned_stream* owned = streamlike::to_owned_stream(s);
  REQUIRE(owned != nullptr);
  CHECK(owned->handle == static_cast<void*>(s.get()));
  CHECK((owned->flags & STREAMLIKE_OWNED_STREAM_HAS_FACTS) != 0);
  CHECK(((owned->flags & STREAMLIKE_OWNED_STREAM_NON_BLOCKING) != 0) == non_blocking);
  CHECK(owned->device == device);
  CHECK(owned->priority == priority);
  unsigned long long id = 0;
  REQUIRE(cudaStreamGetId(s.get(), &id) == cudaSuccess);
  CHECK(owned->stream_id == id);
  CHECK(owned->context_id != 0);
  CHECK(owned->context_id == context_id_of(s.get()));
  owned->deleter(owned);
}

} // namespace

TEST_CASE("a created stream exports its id, device, flags, priority and context id") {
  REQUIRE(fake_cuda_present() == 1);
  for (int device = 0; device < 2; ++device) {
    for (const bool non_blocking : {false, true}) {
      for (const int priority : {0, -3}) {
        INFO("device ", device, ", non_blocking ", non_blocking, ", priority ", priority);
        const streamlike::shared_stream s =
            streamlike::shared_stream::create({.device = device, .priority = priority, .non_blocking = non_blocking});
        check_exported(s, device, priority, non_blocking);
      }
    }
  }
  // The contexts of the two devices differ, so a context id that ignored the device would show.
  const auto on0 = streamlike::shared_stream::create({.device = 0});
  const auto on1 = streamlike::shared_stream::create({.device = 1});
  CHECK(context_id_of(on0.get()) != context_id_of(on1.get()));
}

TEST_CASE("an adopted stream and a moved-in owner export the same facts") {
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  cudaStream_t raw = nullptr;
  REQUIRE(cudaStreamCreateWithPriority(&raw, cudaStreamNonBlocking, -1) == cudaSuccess);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  check_exported(streamlike::shared_stream::adopt(raw), 1, -1, true);
  check_exported(
      streamlike::shared_stream::from_owner(streamlike::unique_stream::create({.priority = -2, .non_blocking = false})),
      0, -2, false);
}

TEST_CASE("a keep-alive stream exports no facts until they are known, then the driver's") {
  cudaStream_t raw = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking) == cudaSuccess);
  {
    const streamlike::shared_stream k = streamlike::shared_stream::keep_alive(raw, 0);
    streamlike_owned_stream* before = streamlike::to_owned_stream(k);
    CHECK((before->flags & STREAMLIKE_OWNED_STREAM_HAS_FACTS) == 0);
    CHECK(before->context_id == 0);
    CHECK(before->stream_id == 0);
    before->deleter(before);
    (void)k.id(); // the facts, asked outside a capture
    check_exported(k, 0, 0, true);
  }
  REQUIRE(cudaStreamDestroy(raw) == cudaSuccess);
}
