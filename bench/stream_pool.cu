// bench/stream_pool.cu: the claim that a pooled stream is cheap where a new stream is not:
// a stream_pool's get() and the drop of the shared_stream it returns, against
// cudaStreamCreate + cudaStreamDestroy. Target: at least 100x faster, in the same run. Beside
// them, what each owning way in costs (create + drop), to compare with cuda.core's create +
// close of an owned stream, measured at about 4.3 us on the H200 host (printed by run_all.sh;
// not measured here).
//
// Benchmark names (bench/tools/run_all.sh judges them with ratios.py --compare):
//   create/cudaStreamCreate+cudaStreamDestroy          the baseline (the claim's words)
//   create/cudaStreamCreateWithPriority(non_blocking)+cudaStreamDestroy
//                                                      the raw calls shared_stream::create and
//                                                      unique_stream::create make (default options:
//                                                      non-blocking, priority 0), for comparison
//   pool/stream_pool::get+drop                         judged: >= 100x faster than the baseline
//   create/shared_stream::create+drop                  shown, beside cuda.core's 4.3 us
//   create/unique_stream::create+drop                  shown, beside cuda.core's 4.3 us
//   diag/...                                           what create's checks cost, one CUDA call each
//
// Without a CUDA device it says so and exits 77 (skipped) before registering anything.
// Nothing is queued on any stream, so there is no queue to bound.
#include "gpu_bench.hpp"

#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_pool.hpp>
#include <streamlike/unique_stream.hpp>

#include <benchmark/benchmark.h>

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

namespace bench_pool {

std::unique_ptr<streamlike::stream_pool> pool; // made in main, once a device is known to exist

void raw_create_destroy(benchmark::State& state) {
  for (auto _ : state) {
    cudaStream_t stream = nullptr;
    bench_gpu::check(cudaStreamCreate(&stream), "cudaStreamCreate");
    benchmark::DoNotOptimize(stream);
    bench_gpu::check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  }
}

void raw_create_with_priority_destroy(benchmark::State& state) {
  for (auto _ : state) {
    cudaStream_t stream = nullptr;
    bench_gpu::check(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, 0), "cudaStreamCreateWithPriority");
    benchmark::DoNotOptimize(stream);
    bench_gpu::check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  }
}

void pool_get_drop(benchmark::State& state) {
  for (auto _ : state) {
    streamlike::shared_stream stream = pool->get();
    benchmark::DoNotOptimize(stream);
  }
}

void shared_create_drop(benchmark::State& state) {
  for (auto _ : state) {
    streamlike::shared_stream stream = streamlike::shared_stream::create();
    benchmark::DoNotOptimize(stream);
  }
}

void unique_create_drop(benchmark::State& state) {
  for (auto _ : state) {
    streamlike::unique_stream stream = streamlike::unique_stream::create();
    benchmark::DoNotOptimize(stream);
  }
}

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
  benchmark::RegisterBenchmark("create/cudaStreamCreate+cudaStreamDestroy", raw_create_destroy);
  benchmark::RegisterBenchmark("create/cudaStreamCreateWithPriority(non_blocking)+cudaStreamDestroy",
                               raw_create_with_priority_destroy);
  benchmark::RegisterBenchmark("pool/stream_pool::get+drop", pool_get_drop);
  benchmark::RegisterBenchmark("create/shared_stream::create+drop", shared_create_drop);
  benchmark::RegisterBenchmark("create/unique_stream::create+drop", unique_create_drop);
  benchmark::RegisterBenchmark("control/cudaStreamCreate+cudaStreamDestroy_again", raw_create_destroy);
  benchmark::RegisterBenchmark("diag/cudaDeviceGetStreamPriorityRange", priority_range_query);
  benchmark::RegisterBenchmark("diag/cudaGetDeviceCount+cudaGetDevice", device_count_and_current);
}

} // namespace bench_pool

int main(int argc, char** argv) {
  if (!bench_gpu::device_present("stream_pool")) return bench_gpu::skip_status;
  bench_gpu::add_device_context();
  bench_pool::pool = std::make_unique<streamlike::stream_pool>();
  benchmark::AddCustomContext("stream_pool size", std::to_string(bench_pool::pool->size()));

  bench_pool::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  bench_pool::pool.reset();
  return 0;
}
