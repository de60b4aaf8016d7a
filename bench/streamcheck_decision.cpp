// bench/streamcheck_decision.cpp: what streamcheck's own decision adds to one driver call that is
// fine (the every-launch path), with a world whose current-stream lookup is a thread-local read
// (streamlike::current_stream()'s own cost is bench/current_stream.cpp's). No GPU, no CUPTI.
//   baseline/lookup              the world's current-stream lookup alone (what the check must ask)
//   control/lookup               the same again, under another name: the run's noise
//   checker/launch_on_current    on_call of a launch on the current stream (wrong-stream on)
//   checker/launch_default_current  the same with a default current stream (nothing set)
//   checker/sync_no_capture      on_call of a capture-punished call with no capture under way
//   checker/launch_beside_capture   a launch on the current stream while another stream captures
// and what a repeat of a reported call site costs beside a clean launch, in paired rounds
// (bench/rounds.hpp), each called from under a stack as deep as a CUPTI callback's stand-in, with
// the real native call site (native_site.cpp) and Python look (call_site.cpp: this process has no
// Python, so it answers at once); each way's ns per call is a counter of rounds/repeat:
//   repeat/clean_launch              on_call of a launch on the current stream
//   repeat/reported_site             a launch on another stream from one site, reported before
//   repeat/allowed_site              the same where the allow-list takes the site (sym:)
//   repeat/reported_site_unwinding   reported_site with the site unwound every time (what a
//                                    repeat would cost without reading it from the stack)
//   control/clean_launch_again       clean_launch again: the run's noise
#include "../src/streamcheck/call_site.hpp"
#include "../src/streamcheck/checker.hpp"
#include "../src/streamcheck/native_site.hpp"
#include "rounds.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>

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

// Frames between the program's call and the checker in a CUPTI callback, a stand-in: the driver's,
// CUPTI's and the checker's own.
constexpr int callback_depth = 16;

template <int n>
[[gnu::noinline]] checker::verdict from_depth(checker& c, const call_event& e) {
  if constexpr (n == 0) {
    return c.on_call(e);
  } else {
    const checker::verdict v = from_depth<n - 1>(c, e);
    benchmark::DoNotOptimize(v); // no tail call: each level keeps its frame
    return v;
  }
}

void fake_symbolize(void*, call_site& site) { site.frames = {"/opt/app/libextension.so: launch_my_kernel+0x10"}; }

world real_sites(void (*take_native)(void*, call_site&)) {
  world w = fake_world();
  w.take_native_site = take_native;
  w.take_python_site = take_python_site;
  w.symbolize = fake_symbolize;
  return w;
}

// Strict: a launch on a stream other than the current one is reported however the ordering model
// would judge these synthetic streams; what is timed is the report's repeat.
constexpr const char* strict = "wrong-stream=strict,capture";
struct repeat_checkers {
  checker reporting{parse_options(strict, nullptr, nullptr, nullptr, nullptr), real_sites(take_native_site)};
  checker allowing{parse_options(strict, nullptr, nullptr, nullptr, "sym:launch_my_kernel"),
                   real_sites(take_native_site)};
  checker unwinding{parse_options(strict, nullptr, nullptr, nullptr, nullptr), real_sites(unwind_native_site)};
};
std::optional<repeat_checkers> repeats;
const call_event on_current = launch(0x7000);
const call_event elsewhere = launch(0x8000);
bool verdicts_held = true; // every call of a way got the verdict the way is about

// The first call from a new stack (a row's, a round's) is a site's first report; then repeats.
void expect(checker::verdict got, checker::verdict wanted) {
  if (got != wanted && !(wanted == checker::verdict::repeated && got == checker::verdict::reported))
    verdicts_held = false;
}

void clean_launch() { expect(from_depth<callback_depth>(repeats->reporting, on_current), checker::verdict::fine); }
void reported_site() { expect(from_depth<callback_depth>(repeats->reporting, elsewhere), checker::verdict::repeated); }
void allowed_site() { expect(from_depth<callback_depth>(repeats->allowing, elsewhere), checker::verdict::allowed); }
void reported_site_unwinding() {
  expect(from_depth<callback_depth>(repeats->unwinding, elsewhere), checker::verdict::repeated);
}

using bench_rounds::make_way;
constexpr bench_rounds::way repeat_ways[] = {
    make_way<clean_launch>("repeat/clean_launch"),
    make_way<reported_site>("repeat/reported_site"),
    make_way<allowed_site>("repeat/allowed_site"),
    make_way<reported_site_unwinding>("repeat/reported_site_unwinding"),
    make_way<clean_launch>("control/clean_launch_again"),
};

std::mt19937 round_order(20261203);
void repeat_rounds(benchmark::State& state) { bench_rounds::run_rounds(state, repeat_ways, 200, round_order); }

void register_repeats() {
  repeats.emplace();
  // Each site's first report, made before anything is timed (what follows are repeats).
  for (checker* c : {&repeats->reporting, &repeats->allowing, &repeats->unwinding})
    (void)from_depth<callback_depth>(*c, elsewhere);
  bench_rounds::register_rows_and_rounds("rounds/repeat", repeat_rounds, repeat_ways);
}

} // namespace

int main(int argc, char** argv) {
  current_of_thread = 0x7000;
  register_repeats();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // One site per stack it was called from: the first calls above, the rows' and the rounds'.
  const auto few = [](const checker& c) { return c.reports().size() <= 3; };
  const bool repeated =
      few(repeats->reporting) && few(repeats->allowing) && few(repeats->unwinding) && repeats->allowing.reported() == 0;
  if (!verdicts_held || !repeated) {
    std::fprintf(stderr, "streamcheck_decision: a repeat row did not repeat its site's report (%s)\n",
                 verdicts_held ? "too many reports" : "a verdict other than the row's");
    return 1;
  }
  return 0;
}
