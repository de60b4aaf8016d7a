// bench/shared_stream_copy.cpp: the claim that sharing a stream costs what sharing any object
// costs: copying and destroying a streamlike::shared_stream against copying and
// destroying a std::shared_ptr, on one thread and on two threads copying the same object at once
// (both cores fight over one cache line: the count). Target: ratio <= 1.0 in the same run.
//
// Benchmark names (bench/tools/run_all.sh judges them with ratios.py --compare):
//   copy/std::shared_ptr<int>/threads:N            the baseline of its thread count
//   copy/shared_stream_keep_alive/threads:N         judged: a shared_stream whose block holds a
//                                                   std::shared_ptr (a real, non-immortal block)
//   copy/shared_stream_immortal_legacy/threads:N    shown: shared_stream::legacy_default(), whose
//                                                   block is never freed but counts all the same
//   control/std::shared_ptr<int>_again/threads:N    the baseline again: the noise floor of the run
//   diag/shared_ptr_in_a_single_threaded_process    libstdc++'s non-atomic count (see main)
//   last/shared_stream_keep_alive                   shown: make a keep-alive shared_stream and
//                                                   drop it, the last reference (the drop that a
//                                                   load-first fast path would make cheaper)
//   last/std::shared_ptr<int>                       shown: the same for std::allocate_shared
// The sizes of the types are in the output's context (benchmark::AddCustomContext).
//
// Nothing here needs a GPU or a driver: keep_alive of a default stream and the immortal default
// streams make no CUDA call, so both are real refcounted shared_streams on any machine.
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>
#include <streamlike/unique_stream.hpp>

#include <benchmark/benchmark.h>

#include "rounds.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#if defined(__GLIBCXX__)
#  include <ext/concurrence.h> // __gnu_cxx::_S_single
#  if __has_include(<sys/single_threaded.h>)
#    include <sys/single_threaded.h> // __libc_single_threaded
#    define BENCH_HAVE_LIBC_SINGLE_THREADED 1
#  endif
#endif

namespace bench_copy {

// The objects every thread copies. Globals, so the two threads of a threads:2 row share one.
std::shared_ptr<int> shared_ptr_source = std::make_shared<int>(1);
std::shared_ptr<int> shared_ptr_source_again = std::make_shared<int>(2);
streamlike::shared_stream keep_alive_source =
    streamlike::shared_stream::keep_alive(streamlike::stream_view::per_thread_default(), std::make_shared<int>(3));
streamlike::shared_stream immortal_source = streamlike::shared_stream::legacy_default();

// Each iteration makes a copy (one atomic increment) and destroys it at the end of the body (one
// atomic decrement, not the last). DoNotOptimize takes the copy's address and clobbers memory,
// so the copy really exists and the source is read again each time; the loop is the same shape
// for every type.
template <class Pointer>
void copy_and_destroy(benchmark::State& state, Pointer* source) {
  for (auto _ : state) {
    Pointer copy(*source);
    benchmark::DoNotOptimize(copy);
  }
}

// Makes a stream owner with one reference and drops it: one allocation, one free, and the last
// reference's drop. The keep-alive object is a copy of a std::shared_ptr, as in the copy rows.
void last_shared_stream(benchmark::State& state) {
  for (auto _ : state) {
    streamlike::shared_stream s =
        streamlike::shared_stream::keep_alive(streamlike::stream_view::per_thread_default(), shared_ptr_source);
    benchmark::DoNotOptimize(s);
  }
}
// The same for std::shared_ptr: a block that holds the same std::shared_ptr copy.
void last_shared_ptr(benchmark::State& state) {
  for (auto _ : state) {
    std::shared_ptr<std::shared_ptr<int>> p = std::make_shared<std::shared_ptr<int>>(shared_ptr_source);
    benchmark::DoNotOptimize(p);
  }
}

#if defined(__GLIBCXX__)
// What std::shared_ptr does in a process that never started a second thread: libstdc++ (GCC 12)
// asks __libc_single_threaded before every count change and then uses a plain ++/--. main()
// starts a thread first so that std::shared_ptr rows count atomically, as they do in every
// program with a second thread (any CUDA program: the driver starts its own); this row shows
// the other case with libstdc++'s own non-atomic policy. Single-threaded only: it is not
// thread-safe.
using single_threaded_shared_ptr = std::__shared_ptr<int, __gnu_cxx::_S_single>;
single_threaded_shared_ptr single_threaded_source = std::__make_shared<int, __gnu_cxx::_S_single>(4);
#endif

// One copy and destroy of each source, for the rounds.
template <class Pointer, Pointer* source>
void copy_call() {
  Pointer copy(*source);
  benchmark::DoNotOptimize(copy);
}

// rounds/copy (bench/rounds.hpp): the judged copy rows and the control in blocks of 100,000
// copies, on one thread and on two threads copying the same objects together (each block begun
// on both at once); the verdicts are read from it, its counters named as the rows.
using bench_rounds::make_way;
constexpr bench_rounds::way copy_ways[] = {
    make_way<copy_call<std::shared_ptr<int>, &shared_ptr_source>>("copy/std::shared_ptr<int>"),
    make_way<copy_call<streamlike::shared_stream, &keep_alive_source>>("copy/shared_stream_keep_alive"),
    make_way<copy_call<std::shared_ptr<int>, &shared_ptr_source_again>>("control/std::shared_ptr<int>_again"),
};
template <int Threads>
void copy_rounds(benchmark::State& state) {
  bench_rounds::run_rounds_together<Threads>(state, copy_ways, 100'000, 20261203);
}

void register_all() {
  bench_rounds::register_rounds("rounds/copy", copy_rounds<1>)->Threads(1);
  bench_rounds::register_rounds("rounds/copy", copy_rounds<2>)->Threads(2);
  auto both = [](benchmark::internal::Benchmark* b) { b->Threads(1)->Threads(2); };
  both(benchmark::RegisterBenchmark("copy/std::shared_ptr<int>", copy_and_destroy<std::shared_ptr<int>>,
                                    &shared_ptr_source));
  both(benchmark::RegisterBenchmark("copy/shared_stream_keep_alive", copy_and_destroy<streamlike::shared_stream>,
                                    &keep_alive_source));
  both(benchmark::RegisterBenchmark("copy/shared_stream_immortal_legacy", copy_and_destroy<streamlike::shared_stream>,
                                    &immortal_source));
  both(benchmark::RegisterBenchmark("control/std::shared_ptr<int>_again", copy_and_destroy<std::shared_ptr<int>>,
                                    &shared_ptr_source_again));
  benchmark::RegisterBenchmark("last/shared_stream_keep_alive", last_shared_stream)->Threads(1);
  benchmark::RegisterBenchmark("last/std::shared_ptr<int>", last_shared_ptr)->Threads(1);
#if defined(__GLIBCXX__)
  benchmark::RegisterBenchmark("diag/shared_ptr_in_a_single_threaded_process",
                               copy_and_destroy<single_threaded_shared_ptr>, &single_threaded_source)
      ->Threads(1);
#endif
}

} // namespace bench_copy

int main(int argc, char** argv) {
  // A second thread, started and joined before anything is measured: from now on libstdc++'s
  // std::shared_ptr counts atomically (see single_threaded_shared_ptr), as in any program that
  // ever had two threads. Without it the threads:1 rows of std::shared_ptr would measure a
  // plain increment until the first threads:2 row ran, and the order of rows would decide.
  std::thread([] {}).join();
#if defined(BENCH_HAVE_LIBC_SINGLE_THREADED)
  if (__libc_single_threaded) {
    std::fprintf(stderr, "shared_stream_copy: the process still counts as single-threaded; std::shared_ptr "
                         "would not count atomically, so the comparison would be unfair\n");
    return 2;
  }
  benchmark::AddCustomContext("std::shared_ptr counting", "atomic (a second thread ran before the benchmarks)");
#endif
  benchmark::AddCustomContext("sizeof(streamlike::shared_stream)", std::to_string(sizeof(streamlike::shared_stream)));
  benchmark::AddCustomContext("sizeof(std::shared_ptr<int>)", std::to_string(sizeof(std::shared_ptr<int>)));
  benchmark::AddCustomContext("sizeof(streamlike::unique_stream)", std::to_string(sizeof(streamlike::unique_stream)));
  benchmark::AddCustomContext("sizeof(streamlike::stream_view)", std::to_string(sizeof(streamlike::stream_view)));
  benchmark::AddCustomContext("sizeof(cudaStream_t)", std::to_string(sizeof(cudaStream_t)));

  bench_copy::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
