// bench/ordering.cu: the claim that ordering two streams costs about what the raw calls cost:
// streamlike::wait(consumer, producer) against the floor, cudaEventRecord +
// cudaStreamWaitEvent with one event created beforehand (target: ratio <= 1.2), against the
// driver's floor, cuEventRecord + cuStreamWaitEvent, which wait itself makes (target: <= 1.10:
// what wait adds is the consumer's capture check, and the producer's context where the producer
// does not know it), and against creating and destroying an event per call (target: faster). Beside them, cuda.core's
// Stream.wait(other_stream), measured at about 836 ns on the H200 host (printed by run_all.sh;
// not measured here).
//
// Benchmark names (bench/tools/run_all.sh judges them with ratios.py --compare):
//   wait/raw_floor:cudaEventRecord+cudaStreamWaitEvent    the baseline (one pre-created event)
//   wait/streamlike::wait(shared_stream,shared_stream)    judged: <= 1.2x the floor, <= 1.10x the
//                                                         driver's floor, < the event per call
//   wait/event_per_call:create+record+wait+destroy        cudaEventCreateWithFlags(DisableTiming) +
//                                                         the floor + cudaEventDestroy, each call
//   wait/streamlike::wait(cudaStream_t,cudaStream_t)      shown: the same wait on raw handles (it
//                                                         asks the producer's context: two driver
//                                                         calls more)
//   wait/driver_floor:cuEventRecord+cuStreamWaitEvent     the baseline of the second judgement: the
//                                                         floor made on the driver, as wait() makes
//                                                         its record and wait (the runtime's
//                                                         wrappers cost about a quarter)
//   control/driver_floor_again                            the driver's floor again: the run's noise
//   diag/cudaStreamGetDevice                              shown, for scale: one cheap runtime query
//                                                         (wait() itself finds the producer's cached
//                                                         event by context id: cuStreamGetCtx +
//                                                         cuCtxGetId, included in its own row)
//   diag/streamlike::wait(same_stream)                    shown: the no-op for one stream
//   wait/pre_capture_check:ctx_lookup+record+wait         the wait as it was before it became
//                                                         capture-safe, reimplemented here (the
//                                                         event found by context id, recorded,
//                                                         waited on): the new wait is judged
//                                                         <= 1.05x it (bench/tools/compare_builds.py)
//
// All rows use the same two non-blocking streams (made by shared_stream::create), on which
// nothing else runs. Every 256 iterations the loop waits, untimed, for both streams
// (bench_gpu::drain_untimed), so the queues of records and waits stay bounded.
//
// The verdicts are read from rounds/ordering (bench/rounds.hpp): each round runs every way above
// but the diag/ rows in a block of 256 calls, in a shuffled order, both streams drained after each
// block, untimed; its counters are named as the rows. The per-call rows are shown beside it.
//
// Without a CUDA device it says so and exits 77 (skipped) before registering anything.
#include "gpu_bench.hpp"
#include "rounds.hpp"

#include <streamlike/ordering.hpp>
#include <streamlike/shared_stream.hpp>

#include <benchmark/benchmark.h>

#include <cuda.h> // driver types only: the entry points come through cudart
#include <cuda_runtime_api.h>

#include <random>
#include <vector>

namespace bench_ordering {

// Made in main, once a device is known to exist.
streamlike::shared_stream producer;
streamlike::shared_stream consumer;
cudaEvent_t floor_event = nullptr;

void drain() {
  bench_gpu::check(cudaStreamSynchronize(producer.get()), "cudaStreamSynchronize(producer)");
  bench_gpu::check(cudaStreamSynchronize(consumer.get()), "cudaStreamSynchronize(consumer)");
}

void raw_floor(benchmark::State& state) {
  const cudaStream_t p = producer.get();
  const cudaStream_t c = consumer.get();
  long i = 0;
  for (auto _ : state) {
    bench_gpu::check(cudaEventRecord(floor_event, p), "cudaEventRecord");
    bench_gpu::check(cudaStreamWaitEvent(c, floor_event, 0), "cudaStreamWaitEvent");
    bench_gpu::drain_untimed(state, i++, drain);
  }
  drain(); // the next benchmark starts with empty queues
}

void event_per_call(benchmark::State& state) {
  const cudaStream_t p = producer.get();
  const cudaStream_t c = consumer.get();
  long i = 0;
  for (auto _ : state) {
    cudaEvent_t event = nullptr;
    bench_gpu::check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    bench_gpu::check(cudaEventRecord(event, p), "cudaEventRecord");
    bench_gpu::check(cudaStreamWaitEvent(c, event, 0), "cudaStreamWaitEvent");
    bench_gpu::check(cudaEventDestroy(event), "cudaEventDestroy");
    bench_gpu::drain_untimed(state, i++, drain);
  }
  drain(); // the next benchmark starts with empty queues
}

void wait_shared(benchmark::State& state) {
  long i = 0;
  for (auto _ : state) {
    streamlike::wait(consumer, producer);
    bench_gpu::drain_untimed(state, i++, drain);
  }
  drain(); // the next benchmark starts with empty queues
}

void wait_raw_handles(benchmark::State& state) {
  const cudaStream_t p = producer.get();
  const cudaStream_t c = consumer.get();
  long i = 0;
  for (auto _ : state) {
    streamlike::wait(c, p);
    bench_gpu::drain_untimed(state, i++, drain);
  }
  drain(); // the next benchmark starts with empty queues
}

void get_device(benchmark::State& state) {
  const cudaStream_t p = producer.get();
  for (auto _ : state) {
    int device = -1;
    bench_gpu::check(cudaStreamGetDevice(p, &device), "cudaStreamGetDevice");
    benchmark::DoNotOptimize(device);
  }
}

// The pre-change wait's own steps: cuStreamGetCtx + cuCtxGetId (driver entry points), a
// thread-local event per context, cudaEventRecord + cudaStreamWaitEvent.
CUresult (*stream_get_ctx)(CUstream, CUcontext*) = nullptr;
CUresult (*ctx_get_id)(CUcontext, unsigned long long*) = nullptr;
CUresult (*event_record)(CUevent, CUstream) = nullptr;
CUresult (*stream_wait_event)(CUstream, CUevent, unsigned int) = nullptr;

void load_driver_entry_points() {
  stream_get_ctx = bench_gpu::driver_entry_point<decltype(stream_get_ctx)>("cuStreamGetCtx");
  ctx_get_id = bench_gpu::driver_entry_point<decltype(ctx_get_id)>("cuCtxGetId");
  event_record = bench_gpu::driver_entry_point<decltype(event_record)>("cuEventRecord");
  stream_wait_event = bench_gpu::driver_entry_point<decltype(stream_wait_event)>("cuStreamWaitEvent");
}

void driver_floor(benchmark::State& state) {
  const cudaStream_t p = producer.get();
  const cudaStream_t c = consumer.get();
  long i = 0;
  for (auto _ : state) {
    if (event_record(floor_event, p) != CUDA_SUCCESS || stream_wait_event(c, floor_event, 0) != CUDA_SUCCESS) {
      std::exit(2);
    }
    bench_gpu::drain_untimed(state, i++, drain);
  }
  drain(); // the next benchmark starts with empty queues
}

[[gnu::noinline]] void pre_capture_check_wait(cudaStream_t c, cudaStream_t p) {
  struct slot {
    unsigned long long context_id;
    cudaEvent_t event;
  };
  thread_local std::vector<slot> slots;
  if (p == c) return;
  CUcontext ctx = nullptr;
  unsigned long long id = 0;
  if (stream_get_ctx(p, &ctx) != CUDA_SUCCESS || ctx_get_id(ctx, &id) != CUDA_SUCCESS) std::exit(2);
  cudaEvent_t event = nullptr;
  for (const slot& s : slots) {
    if (s.context_id == id) {
      event = s.event;
      break;
    }
  }
  if (event == nullptr) {
    bench_gpu::check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    slots.push_back(slot{id, event});
  }
  bench_gpu::check(cudaEventRecord(event, p), "cudaEventRecord");
  bench_gpu::check(cudaStreamWaitEvent(c, event, 0), "cudaStreamWaitEvent");
}

void wait_pre_capture_check(benchmark::State& state) {
  const cudaStream_t p = producer.get();
  const cudaStream_t c = consumer.get();
  long i = 0;
  for (auto _ : state) {
    pre_capture_check_wait(c, p);
    bench_gpu::drain_untimed(state, i++, drain);
  }
  drain(); // the next benchmark starts with empty queues
}

// One call of each way, for the rounds (each block is followed by drain()).
void raw_floor_call() {
  bench_gpu::check(cudaEventRecord(floor_event, producer.get()), "cudaEventRecord");
  bench_gpu::check(cudaStreamWaitEvent(consumer.get(), floor_event, 0), "cudaStreamWaitEvent");
}

void driver_floor_call() {
  if (event_record(floor_event, producer.get()) != CUDA_SUCCESS ||
      stream_wait_event(consumer.get(), floor_event, 0) != CUDA_SUCCESS) {
    std::exit(2);
  }
}

void event_per_call_call() {
  cudaEvent_t event = nullptr;
  bench_gpu::check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  bench_gpu::check(cudaEventRecord(event, producer.get()), "cudaEventRecord");
  bench_gpu::check(cudaStreamWaitEvent(consumer.get(), event, 0), "cudaStreamWaitEvent");
  bench_gpu::check(cudaEventDestroy(event), "cudaEventDestroy");
}

void wait_shared_call() { streamlike::wait(consumer, producer); }

void wait_raw_handles_call() { streamlike::wait(consumer.get(), producer.get()); }

void pre_capture_check_call() { pre_capture_check_wait(consumer.get(), producer.get()); }

using bench_rounds::make_way;
constexpr bench_rounds::way ordering_ways[] = {
    make_way<raw_floor_call>("wait/raw_floor:cudaEventRecord+cudaStreamWaitEvent"),
    make_way<wait_shared_call>("wait/streamlike::wait(shared_stream,shared_stream)"),
    make_way<event_per_call_call>("wait/event_per_call:create+record+wait+destroy"),
    make_way<wait_raw_handles_call>("wait/streamlike::wait(cudaStream_t,cudaStream_t)"),
    make_way<raw_floor_call>("control/raw_floor_again"),
    make_way<driver_floor_call>("wait/driver_floor:cuEventRecord+cuStreamWaitEvent"),
    make_way<driver_floor_call>("control/driver_floor_again"),
    make_way<pre_capture_check_call>("wait/pre_capture_check:ctx_lookup+record+wait"),
};

std::mt19937 round_order(20261203);
void ordering_rounds(benchmark::State& state) {
  bench_rounds::run_rounds(state, ordering_ways, 256, round_order, drain);
  drain(); // the next benchmark starts with empty queues
}

void wait_same_stream(benchmark::State& state) {
  for (auto _ : state) {
    streamlike::wait(consumer, consumer);
  }
}

void register_all() {
  benchmark::RegisterBenchmark("wait/raw_floor:cudaEventRecord+cudaStreamWaitEvent", raw_floor);
  benchmark::RegisterBenchmark("wait/streamlike::wait(shared_stream,shared_stream)", wait_shared);
  benchmark::RegisterBenchmark("wait/event_per_call:create+record+wait+destroy", event_per_call);
  benchmark::RegisterBenchmark("wait/streamlike::wait(cudaStream_t,cudaStream_t)", wait_raw_handles);
  benchmark::RegisterBenchmark("control/raw_floor_again", raw_floor); // the baseline again: the run's noise
  benchmark::RegisterBenchmark("wait/driver_floor:cuEventRecord+cuStreamWaitEvent", driver_floor);
  benchmark::RegisterBenchmark("control/driver_floor_again", driver_floor);
  benchmark::RegisterBenchmark("diag/cudaStreamGetDevice", get_device);
  benchmark::RegisterBenchmark("diag/streamlike::wait(same_stream)", wait_same_stream);
  benchmark::RegisterBenchmark("wait/pre_capture_check:ctx_lookup+record+wait", wait_pre_capture_check);
  bench_rounds::register_rounds("rounds/ordering", ordering_rounds);
}

} // namespace bench_ordering

int main(int argc, char** argv) {
  if (!bench_gpu::device_present("ordering")) return bench_gpu::skip_status;
  bench_gpu::add_device_context();
  bench_ordering::producer = streamlike::shared_stream::create();
  bench_ordering::consumer = streamlike::shared_stream::create();
  bench_gpu::check(cudaEventCreateWithFlags(&bench_ordering::floor_event, cudaEventDisableTiming),
                   "cudaEventCreateWithFlags");

  bench_ordering::load_driver_entry_points();
  bench_ordering::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  bench_ordering::drain();
  bench_gpu::check(cudaEventDestroy(bench_ordering::floor_event), "cudaEventDestroy");
  bench_ordering::producer.reset();
  bench_ordering::consumer.reset();
  return 0;
}
