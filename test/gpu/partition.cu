// streamlike/partition.hpp on a device: a library function that forks side streams from its
// caller's stream through stream_pool::get_for stays inside the caller's SMs (each block records
// the SM it ran on, %smid), while the same function with a plain pool spreads over more; what
// partition_of says agrees with the driver's own answers; asking it, and get_for, leave a capture
// intact in every mode. Skips (77) without a device, and each check without green contexts.
#include "gpu_support.hpp"

#include <streamlike/partition.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_pool.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <vector>

namespace {

using streamlike::partition;
using streamlike::partition_of;
using streamlike::shared_stream;
using streamlike::stream_pool;
using streamlike::stream_view;

constexpr int blocks_per_side = 512;
constexpr int sides = 4;

__device__ unsigned int sm_id() {
  unsigned int id = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// Each block writes the SM it runs on, after holding it a few microseconds so that the blocks of
// one launch spread over every SM they may use.
__global__ void record_sm(unsigned int* out) {
  if (threadIdx.x == 0) {
    const long long start = clock64();
    while (clock64() - start < 20000) {
    }
    out[blockIdx.x] = sm_id();
  }
}

// The library function of the test: forks `sides` side streams from `caller`, each taken by
// `side_stream`, runs a kernel on each, and joins them back into `caller`.
void fork_four(stream_view caller, const std::function<shared_stream(stream_view)>& side_stream, unsigned int* out) {
  std::vector<shared_stream> taken;
  for (int i = 0; i < sides; ++i) {
    taken.push_back(side_stream(caller));
    taken.back().wait(caller);
    record_sm<<<blocks_per_side, 32, 0, taken.back().get()>>>(out + i * blocks_per_side);
    REQUIRE(cudaGetLastError() == cudaSuccess);
  }
  for (const shared_stream& side : taken) caller.wait(side);
}

// The distinct SMs fork_four's kernels ran on.
std::set<unsigned int> sms_touched(stream_view caller, const std::function<shared_stream(stream_view)>& side_stream) {
  unsigned int* out = nullptr;
  REQUIRE(cudaMallocManaged(&out, sizeof(unsigned int) * blocks_per_side * sides) == cudaSuccess);
  fork_four(caller, side_stream, out);
  REQUIRE(cudaStreamSynchronize(caller.get()) == cudaSuccess);
  std::set<unsigned int> sms(out, out + blocks_per_side * sides);
  REQUIRE(cudaFree(out) == cudaSuccess);
  return sms;
}

// A 16-SM partition of device 0, or nothing where the driver has no green contexts.
std::optional<partition> sixteen_sms() {
  try {
    return partition::create(0, 16);
  } catch (const streamlike::error& e) {
    MESSAGE("no green contexts here (" << e.what() << "): skipping");
    return std::nullopt;
  }
}

// `version` picks the ABI: cuStreamGetCtx as of 13000 is cuStreamGetCtx_v2, which takes a third
// argument (the green context) that the two-argument form would leave as garbage.
template <class Fn>
Fn driver_function(const char* name, int version) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult status{};
  REQUIRE(cudaGetDriverEntryPointByVersion(name, &address, version, cudaEnableDefault, &status) == cudaSuccess);
  REQUIRE(address != nullptr);
  return reinterpret_cast<Fn>(address);
}

} // namespace

TEST_CASE("a library's side streams from get_for stay inside its caller's 16 SMs; a plain pool's do not") {
  const auto p = sixteen_sms();
  if (!p) return;
  REQUIRE(p->sm_count() == 16);
  const shared_stream caller = shared_stream::create({.partition = *p});
  stream_pool pool(sides);

  const auto green = sms_touched(caller, [&](stream_view s) { return pool.get_for(s); });
  const auto plain = sms_touched(caller, [&](stream_view) { return pool.get(); });
  std::printf("partition: get_for touched %zu distinct SMs, the plain pool %zu (partition of %u SMs)\n", green.size(),
              plain.size(), p->sm_count());
  CHECK(green.size() <= 16);
  CHECK(plain.size() > 16);
}

TEST_CASE("partition_of agrees with the driver's answers, for green and plain streams") {
  const auto p = sixteen_sms();
  if (!p) return;
  const shared_stream green = shared_stream::create({.partition = *p});
  const shared_stream plain = shared_stream::create();
  const auto get_green = driver_function<decltype(&cuStreamGetGreenCtx)>("cuStreamGetGreenCtx", 13000);
  const auto get_ctx = driver_function<CUresult (*)(CUstream, CUcontext*)>("cuStreamGetCtx", 12000);
  const auto get_id = driver_function<decltype(&cuCtxGetId)>("cuCtxGetId", 12000);
  int device_sms = 0;
  REQUIRE(cudaDeviceGetAttribute(&device_sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess);
  for (const shared_stream* s : {&green, &plain}) {
    CUgreenCtx g = nullptr;
    CUcontext ctx = nullptr;
    unsigned long long id = 0;
    REQUIRE(get_green(s->get(), &g) == CUDA_SUCCESS);
    REQUIRE(get_ctx(s->get(), &ctx) == CUDA_SUCCESS);
    REQUIRE(get_id(ctx, &id) == CUDA_SUCCESS);
    const auto info = partition_of(*s);
    CHECK(info.green == (g != nullptr));
    CHECK(info.green_context == g);
    CHECK(info.context_id == id);
    CHECK(info.device == 0);
    CHECK(info.sm_count == (s == &green ? 16u : static_cast<unsigned int>(device_sms)));
  }
  CHECK(partition_of(green).context_id == p->id());
}

TEST_CASE("partition_of and get_for leave a capture intact, in every mode") {
  const auto p = sixteen_sms();
  if (!p) return;
  stream_pool pool(2);
  for (const cudaStreamCaptureMode mode :
       {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed}) {
    CAPTURE(mode);
    for (const bool on_partition : {true, false}) {
      CAPTURE(on_partition);
      const shared_stream s = on_partition ? shared_stream::create({.partition = *p}) : shared_stream::create();
      const auto before = partition_of(s);
      REQUIRE(cudaStreamBeginCapture(s.get(), mode) == cudaSuccess);
      const auto during = partition_of(s);
      const shared_stream side = pool.get_for(s);
      const auto side_info = partition_of(side);
      cudaGraph_t graph = nullptr;
      // The capture survived: ending it succeeds (an invalidated one ends in an error).
      CHECK(cudaStreamEndCapture(s.get(), &graph) == cudaSuccess);
      if (graph != nullptr) CHECK(cudaGraphDestroy(graph) == cudaSuccess);
      CHECK(during == before);
      CHECK(side_info.context_id == before.context_id);
    }
  }
}

TEST_CASE("owners made on a partition run work there and drop cleanly, the partition last") {
  std::optional<partition> p = sixteen_sms();
  if (!p) return;
  unsigned int* out = nullptr;
  REQUIRE(cudaMallocManaged(&out, sizeof(unsigned int) * blocks_per_side) == cudaSuccess);
  {
    std::optional<streamlike::unique_stream> unique = streamlike::unique_stream::create({.partition = *p});
    shared_stream shared = shared_stream::from_owner(streamlike::unique_stream::create({.partition = *p}));
    p.reset(); // the streams keep the green context alive
    for (const stream_view s : {stream_view(*unique), stream_view(shared)}) {
      CHECK(partition_of(s).sm_count == 16);
      record_sm<<<blocks_per_side, 32, 0, s.get()>>>(out);
      REQUIRE(cudaGetLastError() == cudaSuccess);
      REQUIRE(cudaStreamSynchronize(s.get()) == cudaSuccess);
      CHECK(std::set<unsigned int>(out, out + blocks_per_side).size() <= 16);
    }
  }
  CHECK(cudaGetLastError() == cudaSuccess); // the drops (streams, then the green context) reported nothing
  REQUIRE(cudaFree(out) == cudaSuccess);
}
