// bench/stream_pool.cu: two claims about making streams.
//
// A pooled stream is cheap where a new stream is not: a stream_pool's get() and the drop of the
// shared_stream it returns, against cudaStreamCreate + cudaStreamDestroy. Target: at least 100x
// faster, in the same run.
//
// Creating an owned stream costs what creating a raw one costs: shared_stream::create + drop at
// most 1.05x each raw create + destroy measured in the same run, the runtime's and the driver's,
// with and without a priority (the fastest of them binds). cuda.core's create_stream() + close()
// is measured in the same run_all.sh run by bench/tools/references.py and shown beside these rows;
// it is judged in bench/python/bench_package.py, where both run in one process.
//
// The creation claim is judged from paired rounds (bench/rounds.hpp says why).
//
// Benchmark names (bench/tools/run_all.sh judges them with ratios.py --compare):
//   create/cudaStreamCreate+cudaStreamDestroy          the baseline of the pool claim
//   create/cudaStreamCreateWithFlags(non_blocking)+cudaStreamDestroy
//   create/cudaStreamCreateWithPriority(non_blocking)+cudaStreamDestroy
//   create/cuStreamCreate(non_blocking)+cuStreamDestroy
//   create/cuStreamCreateWithPriority(non_blocking)+cuStreamDestroy
//                                                      the raw ways, runtime and driver, with and
//                                                      without a priority: each a baseline of the
//                                                      creation claim
//   create/shared_stream::create+drop                  judged (in the rounds): <= 1.05x each raw way
//   create/unique_stream::create+drop                  shown
//   control/cudaStreamCreate+cudaStreamDestroy_again   the first raw way again
//   pool/stream_pool::get+drop                         judged: >= 100x faster than the baseline
//   rounds/creation/iterations:1/real_time             one round per repetition (its time is the
//                                                      round's, in ms): every create/ and control/
//                                                      way above runs a block of 100
//                                                      calls, timed alone, in an order shuffled each
//                                                      round; one user counter per way, named as its
//                                                      row, holds its mean ns per create + destroy
//                                                      in the round. The creation claim is judged
//                                                      from these counters
//   diag/...                                           what creation asks CUDA, one piece each: the
//                                                      checks (device, priority range), the facts a
//                                                      shared_stream caches (id, context, primary
//                                                      context), the drop's check and the control
//                                                      block
//
// Without a CUDA device it says so and exits 77 (skipped) before registering anything.
// Nothing is queued on any stream, so there is no queue to bound.
#include "gpu_bench.hpp"
#include "rounds.hpp"

#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_pool.hpp>
#include <streamlike/unique_stream.hpp>

#include <benchmark/benchmark.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>

namespace bench_pool {

std::unique_ptr<streamlike::stream_pool> pool; // made in main, once a device is known to exist

// One create + destroy of each way to make a stream: the loop body of its row and of its block
// in a round, so both time the same code.
void raw_create_destroy() {
  cudaStream_t stream = nullptr;
  bench_gpu::check(cudaStreamCreate(&stream), "cudaStreamCreate");
  benchmark::DoNotOptimize(stream);
  bench_gpu::check(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

void raw_create_with_priority_destroy() {
  cudaStream_t stream = nullptr;
  bench_gpu::check(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, 0), "cudaStreamCreateWithPriority");
  benchmark::DoNotOptimize(stream);
  bench_gpu::check(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

void raw_create_with_flags_destroy() {
  cudaStream_t stream = nullptr;
  bench_gpu::check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  benchmark::DoNotOptimize(stream);
  bench_gpu::check(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

// The driver's, fetched once through cudart's entry-point query (as libstreamlike fetches its own).
struct driver_calls {
  CUresult (*create)(CUstream*, unsigned int) = nullptr;
  CUresult (*create_with_priority)(CUstream*, unsigned int, int) = nullptr;
  CUresult (*destroy)(CUstream) = nullptr;
  CUresult (*stream_get_ctx)(CUstream, CUcontext*) = nullptr;
  CUresult (*ctx_get_id)(CUcontext, unsigned long long*) = nullptr;
  CUresult (*primary_ctx_get_state)(CUdevice, unsigned int*, int*) = nullptr;
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*primary_ctx_release)(CUdevice) = nullptr;
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*stream_get_id)(CUstream, unsigned long long*) = nullptr;
};
driver_calls drv;

void check_driver(CUresult status, const char* what) {
  if (status != CUDA_SUCCESS) {
    std::fprintf(stderr, "%s failed: CUresult %d\n", what, static_cast<int>(status));
    std::exit(2);
  }
}

void driver_create_destroy() {
  CUstream stream = nullptr;
  check_driver(drv.create(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  benchmark::DoNotOptimize(stream);
  check_driver(drv.destroy(stream), "cuStreamDestroy");
}

void driver_create_with_priority_destroy() {
  CUstream stream = nullptr;
  check_driver(drv.create_with_priority(&stream, CU_STREAM_NON_BLOCKING, 0), "cuStreamCreateWithPriority");
  benchmark::DoNotOptimize(stream);
  check_driver(drv.destroy(stream), "cuStreamDestroy");
}

void shared_create_drop() {
  streamlike::shared_stream stream = streamlike::shared_stream::create();
  benchmark::DoNotOptimize(stream);
}

void unique_create_drop() {
  streamlike::unique_stream stream = streamlike::unique_stream::create();
  benchmark::DoNotOptimize(stream);
}

// Every way to make a stream, each under the name of its row; the control is the first again.
using bench_rounds::make_way;
constexpr bench_rounds::way creation_ways[] = {
    make_way<raw_create_destroy>("create/cudaStreamCreate+cudaStreamDestroy"),
    make_way<raw_create_with_flags_destroy>("create/cudaStreamCreateWithFlags(non_blocking)+cudaStreamDestroy"),
    make_way<raw_create_with_priority_destroy>("create/cudaStreamCreateWithPriority(non_blocking)+cudaStreamDestroy"),
    make_way<driver_create_destroy>("create/cuStreamCreate(non_blocking)+cuStreamDestroy"),
    make_way<driver_create_with_priority_destroy>("create/cuStreamCreateWithPriority(non_blocking)+cuStreamDestroy"),
    make_way<shared_create_drop>("create/shared_stream::create+drop"),
    make_way<unique_create_drop>("create/unique_stream::create+drop"),
    make_way<raw_create_destroy>("control/cudaStreamCreate+cudaStreamDestroy_again"),
};

// rounds/creation (bench/rounds.hpp): blocks of 100 creates + destroys, about 4 ms of creating a
// round.
std::mt19937 round_order(20261201);
void creation_rounds(benchmark::State& state) { bench_rounds::run_rounds(state, creation_ways, 100, round_order); }

void pool_get_drop(benchmark::State& state) {
  for (auto _ : state) {
    streamlike::shared_stream stream = pool->get();
    benchmark::DoNotOptimize(stream);
  }
}

void pool_get_drop_call() {
  streamlike::shared_stream stream = pool->get();
  benchmark::DoNotOptimize(stream);
}

// rounds/pool (bench/rounds.hpp): the pool claim from paired rounds, as creation's: a pool's
// get + drop against the raw create + destroy, blocks of 100 calls each, the raw way again as the
// control. Its counters are named as the per-call rows.
constexpr bench_rounds::way pool_ways[] = {
    make_way<raw_create_destroy>("create/cudaStreamCreate+cudaStreamDestroy"),
    make_way<pool_get_drop_call>("pool/stream_pool::get+drop"),
    make_way<raw_create_destroy>("control/cudaStreamCreate+cudaStreamDestroy_again"),
};
std::mt19937 pool_round_order(20261203);
void pool_rounds(benchmark::State& state) { bench_rounds::run_rounds(state, pool_ways, 100, pool_round_order); }

// What create_stream checks before creating, one CUDA call each (diagnostics, not judged).
void priority_range_query(benchmark::State& state) {
  for (auto _ : state) {
    int least = 0;
    int greatest = 0;
    bench_gpu::check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
    benchmark::DoNotOptimize(least);
    benchmark::DoNotOptimize(greatest);
  }
}

void current_device(benchmark::State& state) {
  for (auto _ : state) {
    int device = 0;
    bench_gpu::check(cudaGetDevice(&device), "cudaGetDevice");
    benchmark::DoNotOptimize(device);
  }
}

// The facts a created shared_stream caches beyond what creation fixed, asked of one live stream.
cudaStream_t facts_stream = nullptr; // made in main

void stream_id(benchmark::State& state) {
  for (auto _ : state) {
    unsigned long long id = 0;
    bench_gpu::check(cudaStreamGetId(facts_stream, &id), "cudaStreamGetId");
    benchmark::DoNotOptimize(id);
  }
}

void context_id(benchmark::State& state) {
  for (auto _ : state) {
    CUcontext ctx = nullptr;
    unsigned long long id = 0;
    check_driver(drv.stream_get_ctx(facts_stream, &ctx), "cuStreamGetCtx");
    check_driver(drv.ctx_get_id(ctx, &id), "cuCtxGetId");
    benchmark::DoNotOptimize(id);
  }
}

// What a created shared_stream asks of the driver beside its create and destroy: at create, the
// current context (whose device and primary-ness are remembered per context id) and the stream's
// id; at the drop, that the current context is still the stream's and its device's primary
// context is initialized.
void current_context_id(benchmark::State& state) {
  for (auto _ : state) {
    CUcontext ctx = nullptr;
    unsigned long long id = 0;
    check_driver(drv.ctx_get_current(&ctx), "cuCtxGetCurrent");
    check_driver(drv.ctx_get_id(ctx, &id), "cuCtxGetId");
    benchmark::DoNotOptimize(id);
  }
}

void driver_stream_id(benchmark::State& state) {
  for (auto _ : state) {
    unsigned long long id = 0;
    check_driver(drv.stream_get_id(facts_stream, &id), "cuStreamGetId");
    benchmark::DoNotOptimize(id);
  }
}

void primary_context_state(benchmark::State& state) {
  for (auto _ : state) {
    unsigned int flags = 0;
    int active = 0;
    check_driver(drv.primary_ctx_get_state(0, &flags, &active), "cuDevicePrimaryCtxGetState");
    benchmark::DoNotOptimize(active);
  }
}

// What the drop of a shared_stream asks where the stream's context is not current (and what the
// drop asked every time before it looked at the current context first).
void primary_context_id(benchmark::State& state) {
  for (auto _ : state) {
    unsigned int flags = 0;
    int active = 0;
    CUcontext primary = nullptr;
    unsigned long long id = 0;
    check_driver(drv.primary_ctx_get_state(0, &flags, &active), "cuDevicePrimaryCtxGetState");
    check_driver(drv.primary_ctx_retain(&primary, 0), "cuDevicePrimaryCtxRetain");
    check_driver(drv.ctx_get_id(primary, &id), "cuCtxGetId");
    check_driver(drv.primary_ctx_release(0), "cuDevicePrimaryCtxRelease");
    benchmark::DoNotOptimize(id);
  }
}

// A shared_stream's control block without CUDA: keep_alive makes one (no CUDA call), the drop
// frees it (nothing to destroy).
void control_block(benchmark::State& state) {
  for (auto _ : state) {
    streamlike::shared_stream stream = streamlike::shared_stream::keep_alive(facts_stream, 0);
    benchmark::DoNotOptimize(stream);
  }
}

void device_count_and_current(benchmark::State& state) {
  for (auto _ : state) {
    int count = 0;
    int device = 0;
    bench_gpu::check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    bench_gpu::check(cudaGetDevice(&device), "cudaGetDevice");
    benchmark::DoNotOptimize(count);
    benchmark::DoNotOptimize(device);
  }
}

void register_all() {
  bench_rounds::register_rows_and_rounds("rounds/creation", creation_rounds, creation_ways);
  benchmark::RegisterBenchmark("pool/stream_pool::get+drop", pool_get_drop);
  bench_rounds::register_rounds("rounds/pool", pool_rounds);
  benchmark::RegisterBenchmark("diag/cudaDeviceGetStreamPriorityRange", priority_range_query);
  benchmark::RegisterBenchmark("diag/cudaGetDeviceCount+cudaGetDevice", device_count_and_current);
  benchmark::RegisterBenchmark("diag/cudaGetDevice", current_device);
  benchmark::RegisterBenchmark("diag/cudaStreamGetId", stream_id);
  benchmark::RegisterBenchmark("diag/cuStreamGetCtx+cuCtxGetId", context_id);
  benchmark::RegisterBenchmark("diag/cuCtxGetCurrent+cuCtxGetId", current_context_id);
  benchmark::RegisterBenchmark("diag/cuStreamGetId", driver_stream_id);
  benchmark::RegisterBenchmark("diag/cuDevicePrimaryCtxGetState", primary_context_state);
  benchmark::RegisterBenchmark("diag/primary_context_id:GetState+Retain+cuCtxGetId+Release", primary_context_id);
  benchmark::RegisterBenchmark("diag/control_block:keep_alive+drop", control_block);
}

} // namespace bench_pool

int main(int argc, char** argv) {
  if (!bench_gpu::device_present("stream_pool")) return bench_gpu::skip_status;
  bench_gpu::add_device_context();
  bench_pool::pool = std::make_unique<streamlike::stream_pool>();
  using bench_gpu::driver_entry_point;
  bench_pool::drv.create = driver_entry_point<decltype(bench_pool::drv.create)>("cuStreamCreate");
  bench_pool::drv.create_with_priority =
      driver_entry_point<decltype(bench_pool::drv.create_with_priority)>("cuStreamCreateWithPriority");
  bench_pool::drv.destroy = driver_entry_point<decltype(bench_pool::drv.destroy)>("cuStreamDestroy");
  bench_pool::drv.stream_get_ctx = driver_entry_point<decltype(bench_pool::drv.stream_get_ctx)>("cuStreamGetCtx");
  bench_pool::drv.ctx_get_id = driver_entry_point<decltype(bench_pool::drv.ctx_get_id)>("cuCtxGetId");
  bench_pool::drv.primary_ctx_get_state =
      driver_entry_point<decltype(bench_pool::drv.primary_ctx_get_state)>("cuDevicePrimaryCtxGetState");
  bench_pool::drv.primary_ctx_retain =
      driver_entry_point<decltype(bench_pool::drv.primary_ctx_retain)>("cuDevicePrimaryCtxRetain");
  bench_pool::drv.primary_ctx_release =
      driver_entry_point<decltype(bench_pool::drv.primary_ctx_release)>("cuDevicePrimaryCtxRelease");
  bench_pool::drv.ctx_get_current = driver_entry_point<decltype(bench_pool::drv.ctx_get_current)>("cuCtxGetCurrent");
  bench_pool::drv.stream_get_id = driver_entry_point<decltype(bench_pool::drv.stream_get_id)>("cuStreamGetId");
  bench_gpu::check(cudaStreamCreateWithFlags(&bench_pool::facts_stream, cudaStreamNonBlocking),
                   "cudaStreamCreateWithFlags");
  benchmark::AddCustomContext("stream_pool size", std::to_string(bench_pool::pool->size()));

  bench_pool::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  bench_pool::pool.reset();
  bench_gpu::check(cudaStreamDestroy(bench_pool::facts_stream), "cudaStreamDestroy");
  return 0;
}
