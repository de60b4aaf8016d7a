// bench/owner_queries.cu: what the owners' queries cost, and what a capture check costs. The same
// source is built against the library before and after the capture-safety changes
// (bench/tools/compare_builds.py compares the two programs' rows, run alternately in one session: target
// <= 1.05x), and its rows show, in one process, the cached path against its core (the block's
// facts read directly).
//
// Benchmark names:
//   query/shared_stream::device(created)        a created stream's cached device
//   query/shared_stream::id(created)            ... id
//   query/shared_stream::flags(created)         ... flags
//   query/shared_stream::priority(created)      ... priority
//   query/shared_stream::device(keep_alive)     a keep-alive stream's device, cache filled
//   operation/shared_stream::is_done(created)   an idle stream asked whether its work is done (shown:
//                                               a CUDA call, which now checks for a capture first)
//   operation/shared_stream::sync(created)      ... waited for (nothing queued)
//   operation/unique_stream::is_done            the same on the move-only owner
//   operation/unique_stream::sync               ...
//   query/core:stream_control_block::facts      the cache read alone, inline (no library call)
//   diag/cudaStreamQuery                        is_done's CUDA call alone, for scale
//   diag/cudaStreamIsCapturing                  the capture check, through the runtime
//   diag/cuStreamIsCapturing                    the same on the driver (what every capture check makes)
//
// Without a CUDA device it says so and exits 77 (skipped) before registering anything.
#include "gpu_bench.hpp"

#include <streamlike/detail/stream_control_block.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <benchmark/benchmark.h>

#include <cuda.h> // driver types only: the entry point comes through cudart
#include <cuda_runtime_api.h>

#include <optional>

namespace bench_owner_queries {

streamlike::shared_stream created;
streamlike::shared_stream kept;
streamlike::unique_stream alone;

template <class Query>
void query(benchmark::State& state, const streamlike::shared_stream& s, Query q) {
  for (auto _ : state) {
    auto value = q(s);
    benchmark::DoNotOptimize(value);
  }
}

// The facts read with no shared_stream around it: an immortal block (never disposed) with known facts.
class facts_block final : public streamlike::detail::stream_control_block {
public:
  explicit facts_block(const streamlike::detail::stream_facts& f) noexcept : stream_control_block(nullptr, f) {}

private:
  void dispose() noexcept override {}
};

template <class Owner>
void is_done(benchmark::State& state, const Owner& owner) {
  for (auto _ : state) {
    bool done = owner.is_done();
    benchmark::DoNotOptimize(done);
  }
}

template <class Owner>
void sync(benchmark::State& state, const Owner& owner) {
  for (auto _ : state) {
    owner.sync();
  }
}

void stream_query(benchmark::State& state) {
  const cudaStream_t s = created.get();
  for (auto _ : state) {
    cudaError_t status = cudaStreamQuery(s);
    benchmark::DoNotOptimize(status);
  }
}

void core_facts(benchmark::State& state) {
  static facts_block block(streamlike::detail::stream_facts{0, 1, 0, 0, 0});
  for (auto _ : state) {
    const auto& f = block.facts("device");
    int device = f ? f->device : -1;
    benchmark::DoNotOptimize(device);
  }
}

void is_capturing(benchmark::State& state) {
  const cudaStream_t s = created.get();
  for (auto _ : state) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    bench_gpu::check(cudaStreamIsCapturing(s, &status), "cudaStreamIsCapturing");
    benchmark::DoNotOptimize(status);
  }
}

void driver_is_capturing(benchmark::State& state) {
  const auto is_capturing_fn =
      bench_gpu::driver_entry_point<CUresult (*)(CUstream, CUstreamCaptureStatus*)>("cuStreamIsCapturing");
  const cudaStream_t s = created.get();
  for (auto _ : state) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (is_capturing_fn(s, &status) != CUDA_SUCCESS) std::exit(2);
    benchmark::DoNotOptimize(status);
  }
}

void register_all() {
  benchmark::RegisterBenchmark("query/shared_stream::device(created)", [](benchmark::State& st) {
    query(st, created, [](const streamlike::shared_stream& s) { return s.device(); });
  });
  benchmark::RegisterBenchmark("query/shared_stream::id(created)", [](benchmark::State& st) {
    query(st, created, [](const streamlike::shared_stream& s) { return s.id(); });
  });
  benchmark::RegisterBenchmark("query/shared_stream::flags(created)", [](benchmark::State& st) {
    query(st, created, [](const streamlike::shared_stream& s) { return s.flags(); });
  });
  benchmark::RegisterBenchmark("query/shared_stream::priority(created)", [](benchmark::State& st) {
    query(st, created, [](const streamlike::shared_stream& s) { return s.priority(); });
  });
  benchmark::RegisterBenchmark("query/shared_stream::device(keep_alive)", [](benchmark::State& st) {
    query(st, kept, [](const streamlike::shared_stream& s) { return s.device(); });
  });
  benchmark::RegisterBenchmark("operation/shared_stream::is_done(created)",
                               [](benchmark::State& st) { is_done(st, created); });
  benchmark::RegisterBenchmark("operation/shared_stream::sync(created)",
                               [](benchmark::State& st) { sync(st, created); });
  benchmark::RegisterBenchmark("operation/unique_stream::is_done", [](benchmark::State& st) { is_done(st, alone); });
  benchmark::RegisterBenchmark("operation/unique_stream::sync", [](benchmark::State& st) { sync(st, alone); });
  benchmark::RegisterBenchmark("query/core:stream_control_block::facts", core_facts);
  benchmark::RegisterBenchmark("diag/cudaStreamQuery", stream_query);
  benchmark::RegisterBenchmark("diag/cudaStreamIsCapturing", is_capturing);
  benchmark::RegisterBenchmark("diag/cuStreamIsCapturing", driver_is_capturing);
}

} // namespace bench_owner_queries

int main(int argc, char** argv) {
  if (!bench_gpu::device_present("owner_queries")) return bench_gpu::skip_status;
  bench_gpu::add_device_context();
  bench_owner_queries::created = streamlike::shared_stream::create();
  bench_owner_queries::kept = streamlike::shared_stream::keep_alive(bench_owner_queries::created.view(), 0);
  (void)bench_owner_queries::kept.device(); // fills the keep-alive's cache
  bench_owner_queries::alone = streamlike::unique_stream::create();

  bench_owner_queries::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  bench_owner_queries::alone = streamlike::unique_stream{};
  bench_owner_queries::kept.reset();
  bench_owner_queries::created.reset();
  return 0;
}
