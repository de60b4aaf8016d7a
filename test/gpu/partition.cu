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

// A green context made with the driver's calls, as a framework (torch) makes one, and a stream in it.
struct raw_green {
  CUgreenCtx green = nullptr;
  CUstream stream = nullptr;
};
raw_green make_raw_green(unsigned int sms) {
  const auto device_resource = driver_function<decltype(&cuDeviceGetDevResource)>("cuDeviceGetDevResource", 13000);
  const auto split = driver_function<decltype(&cuDevSmResourceSplitByCount)>("cuDevSmResourceSplitByCount", 13000);
  const auto describe = driver_function<decltype(&cuDevResourceGenerateDesc)>("cuDevResourceGenerateDesc", 13000);
  const auto create = driver_function<decltype(&cuGreenCtxCreate)>("cuGreenCtxCreate", 13000);
  const auto create_stream = driver_function<decltype(&cuGreenCtxStreamCreate)>("cuGreenCtxStreamCreate", 13000);
  CUdevResource all{};
  CUdevResource group{};
  unsigned int groups = 1;
  CUdevResourceDesc desc = nullptr;
  raw_green made;
  REQUIRE(device_resource(0, &all, CU_DEV_RESOURCE_TYPE_SM) == CUDA_SUCCESS);
  REQUIRE(split(&group, &groups, &all, nullptr, 0, sms) == CUDA_SUCCESS);
  REQUIRE(describe(&desc, &group, 1) == CUDA_SUCCESS);
  REQUIRE(create(&made.green, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM) == CUDA_SUCCESS);
  REQUIRE(create_stream(&made.stream, made.green, CU_STREAM_NON_BLOCKING, 0) == CUDA_SUCCESS);
  return made;
}

void destroy_raw_green(const raw_green& g) {
  REQUIRE(driver_function<decltype(&cuStreamDestroy)>("cuStreamDestroy", 12000)(g.stream) == CUDA_SUCCESS);
  REQUIRE(driver_function<decltype(&cuGreenCtxDestroy)>("cuGreenCtxDestroy", 13000)(g.green) == CUDA_SUCCESS);
}

// The driver's answer for a destroyed green context's handle, which get_for asks (cuCtxFromGreenCtx)
// to drop a borrowed sub-pool whose green context is gone: an error, or another context's id where
// the address went to a new green context; never a crash.
TEST_CASE("get_for after its owner destroyed a borrowed green context: the next one gets a sub-pool of its own") {
  if (!sixteen_sms()) return;
  const raw_green first = make_raw_green(16);
  const unsigned long long first_id = partition_of(first.stream).context_id;
  raw_green second;
  {
    stream_pool pool(2);
    {
      const shared_stream side = pool.get_for(first.stream);
      CHECK(partition_of(side).context_id == first_id);
      side.sync();
    }
    destroy_raw_green(first); // the owner's doing, while the pool holds a sub-pool of it
    second = make_raw_green(24);
    std::printf("partition: a green context made after one was destroyed %s its address\n",
                second.green == first.green ? "reuses" : "does not reuse");
    const auto caller = partition_of(second.stream);
    CHECK(caller.context_id != first_id);
    {
      const shared_stream side = pool.get_for(second.stream); // drops the first's sub-pool
      CHECK(partition_of(side) == caller);
      CHECK(partition_of(side).sm_count == 24);
      side.wait(stream_view(second.stream));
      side.sync();
    }
  } // the pool, with its sub-pool of `second`, before `second`'s owner destroys it
  CHECK(cudaGetLastError() == cudaSuccess);
  destroy_raw_green(second);
}
