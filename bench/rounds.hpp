// Paired rounds for claims whose baseline drifts over a run (creating a stream: each per-call
// row's repetitions spread by 9-19% on the H200 host, and two rows of the identical baseline read
// up to 4% apart, too close to a 5% margin to tell).
//
// A round runs every way in a short block, timed alone, in an order shuffled each round, so each
// round measures all ways in the same window. Every judged row of bench/ is judged so (run_all.sh):
// per-call rows of separate benchmarks drift apart over a run, and their controls then read off
// by more than a claim's margin. Registered with Iterations(1), each repetition is one
// round; bench/tools/ratios.py --rounds then takes the median over rounds of each round's ratio,
// which cancels the drift (the baseline against itself reads within 1%) and, being a median of
// ratios, leaves out a round that a hiccup of the host slowed.
#ifndef STREAMLIKE_BENCH_ROUNDS_HPP
#define STREAMLIKE_BENCH_ROUNDS_HPP

#include <benchmark/benchmark.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <vector>

namespace bench_rounds {

/// One way to do what a claim is about: its row's name, the row (one call per iteration) and its
/// block in a round (`calls` calls in a row). Made by way<call>(name), so both time the same call.
struct way {
  const char* name;
  void (*row)(benchmark::State&);
  void (*block)(int calls);
};

template <void (*call)()>
void per_call(benchmark::State& state) {
  for (auto _ : state) call();
}

template <void (*call)()>
void block_of(int calls) {
  for (int i = 0; i < calls; ++i) call();
}

template <void (*call)()>
constexpr way make_way(const char* name) {
  return {name, per_call<call>, block_of<call>};
}

/// The body of a rounds benchmark: per iteration one round of `ways`, each a block of
/// `calls_per_block` calls in an order drawn from `order_source` (seeded once by the caller, so a
/// run is reproducible and its rounds still differ). One user counter per way, named as its row,
/// holds its mean ns per call over the rounds. `settle`, where given, runs after each block,
/// untimed (a GPU program drains its streams there, so queues stay bounded).
inline void run_rounds(benchmark::State& state, std::span<const way> ways, int calls_per_block,
                       std::mt19937& order_source, void (*settle)() = nullptr) {
  std::vector<std::size_t> order(ways.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<double> total_ns(ways.size(), 0.0);
  for (auto _ : state) {
    std::shuffle(order.begin(), order.end(), order_source);
    for (const std::size_t w : order) {
      const auto start = std::chrono::steady_clock::now();
      ways[w].block(calls_per_block);
      const auto stop = std::chrono::steady_clock::now();
      total_ns[w] += std::chrono::duration<double, std::nano>(stop - start).count();
      if (settle != nullptr) settle();
    }
  }
  const double calls = static_cast<double>(state.iterations()) * calls_per_block;
  for (std::size_t w = 0; w < ways.size(); ++w) {
    state.counters[ways[w].name] = benchmark::Counter(calls > 0 ? total_ns[w] / calls : 0.0);
  }
}

/// run_rounds on `Threads` threads at once (a benchmark registered with ->Threads(Threads)): every
/// thread runs the same way at the same time, each block begun together (a barrier, untimed), in
/// an order that is the same on every thread (drawn from `seed` and the round's number). A way's
/// counter is the threads' mean ns per call. For claims about contention: both threads' calls
/// fight over one cache line while they run.
template <int Threads>
void run_rounds_together(benchmark::State& state, std::span<const way> ways, int calls_per_block, std::uint32_t seed) {
  static std::barrier together(Threads);
  std::vector<std::size_t> order(ways.size());
  std::vector<double> total_ns(ways.size(), 0.0);
  std::uint32_t round = 0;
  for (auto _ : state) {
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::mt19937 order_source(seed + round++);
    std::shuffle(order.begin(), order.end(), order_source);
    for (const std::size_t w : order) {
      together.arrive_and_wait();
      const auto start = std::chrono::steady_clock::now();
      ways[w].block(calls_per_block);
      const auto stop = std::chrono::steady_clock::now();
      total_ns[w] += std::chrono::duration<double, std::nano>(stop - start).count();
    }
  }
  const double calls = static_cast<double>(state.iterations()) * calls_per_block;
  for (std::size_t w = 0; w < ways.size(); ++w) {
    state.counters[ways[w].name] =
        benchmark::Counter(calls > 0 ? total_ns[w] / calls : 0.0, benchmark::Counter::kAvgThreads);
  }
}

/// Registers only `name`, a rounds row (for a program whose per-call rows are its own).
inline benchmark::internal::Benchmark* register_rounds(const char* name, void (*rounds)(benchmark::State&)) {
  return benchmark::RegisterBenchmark(name, rounds)->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
}

/// Registers a row per way, then `name` running run_rounds: a whole round per iteration, so its
/// time is a round's, never a call's (the counters are per call).
inline void register_rows_and_rounds(const char* name, void (*rounds)(benchmark::State&), std::span<const way> ways) {
  for (const way& w : ways) benchmark::RegisterBenchmark(w.name, w.row);
  benchmark::RegisterBenchmark(name, rounds)->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
}

} // namespace bench_rounds

#endif // STREAMLIKE_BENCH_ROUNDS_HPP
