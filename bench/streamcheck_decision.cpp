// bench/streamcheck_decision.cpp: what streamcheck's own decision adds to one driver call that is
// fine (the every-launch path), with a world whose current-stream lookup is a thread-local read
// (streamlike::current_stream()'s own cost is bench/current_stream.cpp's). No GPU, no CUPTI.
//   baseline/lookup              the world's current-stream lookup alone (what the check must ask)
//   control/lookup               the same again, under another name: the run's noise
//   checker/launch_on_current    on_call of a launch on the current stream (wrong-stream on)
//   checker/launch_default_current  the same with a default current stream (nothing set)
//   checker/sync_no_capture      on_call of a capture-punished call with no capture under way
//   checker/launch_beside_capture   a launch on the current stream while another stream captures
#include "../src/streamcheck/checker.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>

namespace {

using namespace streamlike::check;

thread_local std::uintptr_t current_of_thread = 0x7000;

[[gnu::noinline]] bool lookup(void*, int device, std::uintptr_t* stream) {
  benchmark::ClobberMemory();
  *stream = device == 0 ? current_of_thread : 0;
  return true;
}

world fake_world() {
  world w;
  w.current_stream = lookup;
  return w;
}

call_event launch(std::uintptr_t stream) {
  call_event e;
  e.kind = call_kind::launch;
  e.api = "cuLaunchKernel";
  e.has_stream = true;
  e.stream = stream;
  e.thread = 1;
  return e;
}

void lookup_alone(benchmark::State& state) {
  std::uintptr_t stream = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(lookup(nullptr, 0, &stream));
    benchmark::DoNotOptimize(stream);
  }
}
BENCHMARK(lookup_alone)->Name("baseline/lookup");
BENCHMARK(lookup_alone)->Name("control/lookup");

void on_call(benchmark::State& state, std::uintptr_t current, call_event e, bool capture_elsewhere) {
  checker c(parse_options("all", nullptr, nullptr, nullptr, nullptr), fake_world());
  if (capture_elsewhere) {
    call_event begin = launch(0x9000);
    begin.kind = call_kind::capture_begin;
    begin.blocking = false;
    begin.returned = true;
    c.on_call(begin);
  }
  current_of_thread = current;
  for (auto _ : state) {
    benchmark::DoNotOptimize(c.on_call(e));
    benchmark::ClobberMemory();
  }
  current_of_thread = 0x7000;
  if (!c.reports().empty()) state.SkipWithError("a fine call was reported");
}
BENCHMARK_CAPTURE(on_call, launch_on_current, 0x7000, launch(0x7000), false)->Name("checker/launch_on_current");
BENCHMARK_CAPTURE(on_call, launch_default_current, 0, launch(0x7000), false)->Name("checker/launch_default_current");
BENCHMARK_CAPTURE(
    on_call, sync_no_capture, 0x7000,
    [] {
      call_event e = launch(0);
      e.kind = call_kind::ctx_sync;
      e.has_stream = false;
      return e;
    }(),
    false)
    ->Name("checker/sync_no_capture");
BENCHMARK_CAPTURE(on_call, launch_beside_capture, 0x7000, launch(0x7000), true)->Name("checker/launch_beside_capture");

} // namespace

BENCHMARK_MAIN();
