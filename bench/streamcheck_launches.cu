// bench/streamcheck_launches.cu: a loop of 10,000 small launches on the current stream, the
// workload whose wall time streamcheck must not raise by more than 10%. It measures one
// configuration; bench/tools/streamcheck_overhead.py runs it without the checker, with the
// checker injected but off, and with it on, alternately, and computes the ratios and the cost per
// checked launch. GPU only: exits 77 without a device.
#include "gpu_bench.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <benchmark/benchmark.h>

namespace {

__global__ void empty_kernel() {}

constexpr int launches = 10000;

void launch_loop(benchmark::State& state) {
  const auto s = streamlike::unique_stream::create();
  const streamlike::scoped_current_stream current{s}; // every launch checked against a set stream
  for (auto _ : state) {
    for (int i = 0; i < launches; ++i) empty_kernel<<<1, 1, 0, s.get()>>>();
    (void)cudaStreamSynchronize(s.get());
  }
  state.counters["launches"] = launches;
  if (cudaGetLastError() != cudaSuccess) state.SkipWithError("a launch failed");
}
BENCHMARK(launch_loop)->Name("launches/10000_on_current")->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

int main(int argc, char** argv) {
  if (!bench_gpu::device_present("streamcheck_launches")) return bench_gpu::skip_status;
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
