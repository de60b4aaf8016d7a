// Partitions (docs/partitions.md): what a stream on a partition and a pooled stream of the caller's
// partition cost, each against its baseline in the same run.
//   create/: a green stream's create + drop through the owners, against the driver's own
//            cuGreenCtxStreamCreate + cuStreamDestroy (claim: at most 1.05x), judged from
//            rounds/creation: the same ways in paired rounds (bench/rounds.hpp says why);
//   pool/:   stream_pool::get_for(caller) + drop for a green and a plain caller, against
//            stream_pool::get + drop (claim: at most 2x);
//   parts/:  what the owners' steps would add to the driver's pair alone, in rounds/creation_parts
//            (shown, not judged);
//   diag/:   the driver queries get_for and partition_of make (shown, not judged).
// The partition is 16 SMs of device 0. Skips (77) without a device; exits 2 where the driver
// cannot make green contexts (a failure of the claim's premise, not a measurement).
//
// Judged with bench/tools/ratios.py (docs/partitions.md, "Benchmarks", has the command line):
// rounds/creation's counters against create/cuGreenCtxStreamCreate+cuStreamDestroy (<= 1.05),
// gated by the control/ way; the pool/ get_for rows against pool/stream_pool::get+drop (<= 2).
#include "gpu_bench.hpp"
#include "rounds.hpp"

#include <streamlike/partition.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_pool.hpp>
#include <streamlike/unique_stream.hpp>

#include <benchmark/benchmark.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>

namespace bench_partition {

struct driver_calls {
  decltype(&cuGreenCtxStreamCreate) green_stream_create = nullptr;
  decltype(&cuStreamDestroy) destroy = nullptr;
  decltype(&cuStreamGetGreenCtx) stream_get_green_ctx = nullptr;
  decltype(&cuStreamGetCtx) stream_get_ctx = nullptr;
  decltype(&cuStreamGetId) stream_get_id = nullptr;
};
driver_calls drv;
std::optional<streamlike::partition> on;
std::unique_ptr<streamlike::stream_pool> pool;
std::optional<streamlike::shared_stream> green_caller;
std::optional<streamlike::shared_stream> plain_caller;

void check_driver(CUresult status, const char* what) {
  if (status != CUDA_SUCCESS) {
    std::fprintf(stderr, "%s failed: CUresult %d\n", what, static_cast<int>(status));
    std::exit(2);
  }
}

// One create + destroy of each way to make a green stream: the loop body of its row and of its
// block in a round, so both time the same code.
void raw_green_create_destroy() {
  CUstream stream = nullptr;
  check_driver(drv.green_stream_create(&stream, on->green_context(), CU_STREAM_NON_BLOCKING, 0),
               "cuGreenCtxStreamCreate");
  benchmark::DoNotOptimize(stream);
  check_driver(drv.destroy(stream), "cuStreamDestroy");
}

void shared_create_drop() {
  streamlike::shared_stream stream = streamlike::shared_stream::create({.partition = *on});
  benchmark::DoNotOptimize(stream);
}

void unique_create_drop() {
  streamlike::unique_stream stream = streamlike::unique_stream::create({.partition = *on});
  benchmark::DoNotOptimize(stream);
}

// What the owners add to the driver's pair, part by part (parts/, shown, not judged): a caller's
// options (a copy of the partition, made before the create and dropped after the destroy), the id
// shared_stream asks, a std::mutex taken twice (as a table under a lock would be), and two atomic
// read-modify-writes, each around the driver's own pair.
void raw_with_options() {
  const streamlike::stream_options options{.partition = *on};
  benchmark::DoNotOptimize(&options);
  raw_green_create_destroy();
}

void raw_with_stream_id() {
  CUstream stream = nullptr;
  check_driver(drv.green_stream_create(&stream, on->green_context(), CU_STREAM_NON_BLOCKING, 0),
               "cuGreenCtxStreamCreate");
  unsigned long long id = 0;
  check_driver(drv.stream_get_id(stream, &id), "cuStreamGetId");
  benchmark::DoNotOptimize(id);
  check_driver(drv.destroy(stream), "cuStreamDestroy");
}

std::mutex table_lock;
void raw_with_mutex_twice() {
  {
    const std::lock_guard lock(table_lock);
    benchmark::ClobberMemory();
  }
  raw_green_create_destroy();
  {
    const std::lock_guard lock(table_lock);
    benchmark::ClobberMemory();
  }
}

std::atomic<long> counter{0};
void raw_with_two_atomics() {
  CUstream stream = nullptr;
  check_driver(drv.green_stream_create(&stream, on->green_context(), CU_STREAM_NON_BLOCKING, 0),
               "cuGreenCtxStreamCreate");
  counter.fetch_add(1, std::memory_order_acq_rel);
  check_driver(drv.destroy(stream), "cuStreamDestroy");
  counter.fetch_sub(1, std::memory_order_acq_rel);
}

using bench_rounds::make_way;
constexpr bench_rounds::way creation_ways[] = {
    make_way<raw_green_create_destroy>("create/cuGreenCtxStreamCreate+cuStreamDestroy"),
    make_way<shared_create_drop>("create/shared_stream::create(partition)+drop"),
    make_way<unique_create_drop>("create/unique_stream::create(partition)+drop"),
    make_way<raw_green_create_destroy>("control/cuGreenCtxStreamCreate+cuStreamDestroy_again"),
};

constexpr bench_rounds::way creation_parts[] = {
    make_way<raw_green_create_destroy>("parts/cuGreenCtxStreamCreate+cuStreamDestroy"),
    make_way<raw_with_options>("parts/+options"),
    make_way<raw_with_stream_id>("parts/+cuStreamGetId"),
    make_way<raw_with_mutex_twice>("parts/+std::mutex_twice"),
    make_way<raw_with_two_atomics>("parts/+two_atomics"),
    make_way<shared_create_drop>("parts/shared_stream::create(partition)+drop"),
    make_way<unique_create_drop>("parts/unique_stream::create(partition)+drop"),
};

// rounds/creation and rounds/creation_parts (bench/rounds.hpp): blocks of 100 creates + destroys,
// some 2.5 ms a round.
std::mt19937 round_order(20261202);
void creation_rounds(benchmark::State& state) { bench_rounds::run_rounds(state, creation_ways, 100, round_order); }
void creation_parts_rounds(benchmark::State& state) {
  bench_rounds::run_rounds(state, creation_parts, 100, round_order);
}

void pool_get_drop(benchmark::State& state) {
  for (auto _ : state) {
    streamlike::shared_stream stream = pool->get();
    benchmark::DoNotOptimize(stream);
  }
}

template <std::optional<streamlike::shared_stream>* caller>
void pool_get_for_drop(benchmark::State& state) {
  const streamlike::stream_view view = **caller;
  for (auto _ : state) {
    streamlike::shared_stream stream = pool->get_for(view);
    benchmark::DoNotOptimize(stream);
  }
}

void green_ctx_query(benchmark::State& state) {
  for (auto _ : state) {
    CUgreenCtx green = nullptr;
    check_driver(drv.stream_get_green_ctx(green_caller->get(), &green), "cuStreamGetGreenCtx");
    benchmark::DoNotOptimize(green);
  }
}

void ctx_query(benchmark::State& state) {
  for (auto _ : state) {
    CUcontext context = nullptr;
    check_driver(drv.stream_get_ctx(plain_caller->get(), &context), "cuStreamGetCtx");
    benchmark::DoNotOptimize(context);
  }
}

void partition_of_green(benchmark::State& state) {
  for (auto _ : state) {
    const streamlike::partition_info info = streamlike::partition_of(*green_caller);
    benchmark::DoNotOptimize(info);
  }
}

void register_all() {
  bench_rounds::register_rows_and_rounds("rounds/creation", creation_rounds, creation_ways);
  bench_rounds::register_rows_and_rounds("rounds/creation_parts", creation_parts_rounds, creation_parts);
  benchmark::RegisterBenchmark("pool/stream_pool::get+drop", pool_get_drop);
  benchmark::RegisterBenchmark("pool/stream_pool::get_for(green)+drop", pool_get_for_drop<&green_caller>);
  benchmark::RegisterBenchmark("pool/stream_pool::get_for(plain)+drop", pool_get_for_drop<&plain_caller>);
  benchmark::RegisterBenchmark("diag/cuStreamGetGreenCtx", green_ctx_query);
  benchmark::RegisterBenchmark("diag/cuStreamGetCtx", ctx_query);
  benchmark::RegisterBenchmark("diag/partition_of(green)", partition_of_green);
}

} // namespace bench_partition

int main(int argc, char** argv) {
  namespace bp = bench_partition;
  if (!bench_gpu::device_present("partition")) return bench_gpu::skip_status;
  bench_gpu::add_device_context();
  try {
    bp::on = streamlike::partition::create(0, 16);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "partition: cannot make a 16-SM partition of device 0: %s\n", e.what());
    return 2;
  }
  using bench_gpu::driver_entry_point;
  bp::drv.green_stream_create =
      driver_entry_point<decltype(bp::drv.green_stream_create)>("cuGreenCtxStreamCreate", 13000);
  bp::drv.destroy = driver_entry_point<decltype(bp::drv.destroy)>("cuStreamDestroy");
  bp::drv.stream_get_green_ctx =
      driver_entry_point<decltype(bp::drv.stream_get_green_ctx)>("cuStreamGetGreenCtx", 13000);
  bp::drv.stream_get_ctx = driver_entry_point<decltype(bp::drv.stream_get_ctx)>("cuStreamGetCtx");
  bp::drv.stream_get_id = driver_entry_point<decltype(bp::drv.stream_get_id)>("cuStreamGetId");
  bp::pool = std::make_unique<streamlike::stream_pool>();
  bp::green_caller = streamlike::shared_stream::create({.partition = *bp::on});
  bp::plain_caller = streamlike::shared_stream::create();
  (void)bp::pool->get_for(*bp::green_caller); // the sub-pool is made before timing
  benchmark::AddCustomContext("partition SMs", std::to_string(bp::on->sm_count()));

  bp::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  bp::pool.reset();
  bp::green_caller.reset();
  bp::plain_caller.reset();
  bp::on.reset();
  return 0;
}
