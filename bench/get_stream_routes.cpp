// bench/get_stream_routes.cpp: the claim that accepting "any stream" costs nothing.
//
// A generic API edge, `template <stream_like S> api_edge(S&& s)`, converts its argument once
// with streamlike::get_stream and hands a stream_view to compiled code (here `consume`). The
// claim is about a stream passed through a generic stream_like function via each route, against a
// raw cudaStream_t passed through it: so the baseline is the raw cudaStream_t through that same
// generic function (route/cudaStream_t), and every other route must cost what it costs.
//
// Benchmark names: route/cudaStream_t (the baseline ratios.py divides by), route/ (the claim,
// judged), control/ (the baseline again under another name: the noise floor, judged too),
// by_value/ and diag/ (diagnostics, not judged). diag/cudaStream_t->plain_function is what code
// without streamlike writes (a plain function taking the handle by value); it shows what the
// edge's *signature* costs, which is not get_stream's doing: an out-of-line S&& edge receives
// an address and loads the handle (see api_edge_by_value, api_edge_raw_ref and RESULTS.md).
//
// Nothing touches CUDA: the handles are fake addresses that are never dereferenced or sent to
// the runtime, so this runs without a GPU or a driver.
//
// bench/tools/ratios.py turns the output into ratios against the baseline; bench/tools/instruction_counts.py
// counts the instructions each benchmark executes per iteration. It finds the functions by the
// names used here: keep the names of namespace bench_routes.
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_view.hpp>

#include <benchmark/benchmark.h>

#include "rounds.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>

// The edges must stay real calls, or the compiler would fold the conversion into the loop and
// we would measure nothing. GCC's noipa also stops interprocedural tricks that noinline allows
// (constant propagation into a clone, identical-code folding of the instantiations, IPA-SRA
// turning the reference into a value), so each edge is compiled as if called from elsewhere.
// Clang has no noipa; its equivalents (argument promotion, IPSCCP) apply only to functions with
// internal linkage, which is why nothing below is in an anonymous namespace.
#if defined(__clang__)
#  define BENCH_EDGE [[gnu::noinline]]
#else
#  define BENCH_EDGE [[gnu::noinline, gnu::noipa]]
#endif

namespace bench_routes {

// A distinct fake handle per route, so no two benchmarks can share a constant.
inline cudaStream_t fake_handle(std::uintptr_t address) noexcept { return reinterpret_cast<cudaStream_t>(address); }

// ---- The compiled side: what the view or handle is handed to. ---------------------------------
// DoNotOptimize makes the handle an input the compiler must produce, so the conversion cannot be
// deleted. It costs no instruction under GCC (register operand) and one store under Clang (which
// takes the memory operand), the same for the view and the raw handle.
BENCH_EDGE void consume(streamlike::stream_view stream) { benchmark::DoNotOptimize(stream.get()); }
BENCH_EDGE void consume_raw(cudaStream_t stream) { benchmark::DoNotOptimize(stream); }

// ---- The API edge. -----------------------------------------------------------------------------
// Every edge ends with ClobberMemory after its call, as a real edge returns to its caller after
// handing over (and may have more to do): without it the call becomes a tail jump, whose
// encoding (2 or 5 bytes) depends on where the linker happens to put `consume`, and on the
// machine of RESULTS.md that alone moved identical code by up to 25%.

// Generic, the recommended shape: any stream-like argument, converted once, a view passed inward.
template <streamlike::stream_like S>
BENCH_EDGE void api_edge(S&& stream) {
  consume(streamlike::get_stream(std::forward<S>(stream)));
  benchmark::ClobberMemory();
}

// Diagnostic: a plain (non-template) function on the raw handle, by value: what code without
// streamlike writes.
BENCH_EDGE void api_edge_raw(cudaStream_t stream) {
  consume_raw(stream);
  benchmark::ClobberMemory();
}

// Diagnostics, to say where a difference from the plain function comes from (see RESULTS.md).
// A forwarding reference passes the argument's address, so an out-of-line api_edge loads the
// handle from memory where api_edge_raw may get it in a register. These two split that cost
// from get_stream's: the plain function taking the handle by reference pays the load without
// any get_stream; the generic function taking S by value runs every route without the load.
BENCH_EDGE void api_edge_raw_ref(cudaStream_t& stream) {
  consume_raw(stream);
  benchmark::ClobberMemory();
}

template <streamlike::stream_like S>
BENCH_EDGE void api_edge_by_value(S stream) {
  consume(streamlike::get_stream(stream));
  benchmark::ClobberMemory();
}

// ---- One stream type per route (see get_stream.hpp for the order). ------------------------------
// Route 1: tag_invoke, as a hidden friend.
struct tag_invoke_stream {
  cudaStream_t handle;
  friend streamlike::stream_view tag_invoke(streamlike::get_stream_t, const tag_invoke_stream& s) noexcept {
    return s.handle;
  }
};

// Route 3: member get_stream(), as CCCL's cuda::get_stream accepts it.
struct member_get_stream_stream {
  cudaStream_t handle;
  [[nodiscard]] cudaStream_t get_stream() const noexcept { return handle; }
};

// Route 3: member stream().
struct member_stream_stream {
  cudaStream_t handle;
  [[nodiscard]] cudaStream_t stream() const noexcept { return handle; }
};

// Route 2: converts to both handle types, as rmm::cuda_stream_view does.
struct rmm_like_stream {
  cudaStream_t handle;
  operator cudaStream_t() const noexcept { return handle; }
  operator cuda::stream_ref() const noexcept { return cuda::stream_ref{handle}; }
};

// Each type must take the route its benchmark is named after, or the numbers would be filed
// under the wrong route. (detail:: is not public API; a benchmark may look.)
namespace routes = streamlike::detail::get_stream_routes;
template <class T>
inline constexpr routes::route route_of = routes::route_of<T&>;
static_assert(route_of<cudaStream_t> == routes::route::handle);
static_assert(route_of<streamlike::stream_view> == routes::route::handle);
static_assert(route_of<cuda::stream_ref> == routes::route::handle);
static_assert(route_of<tag_invoke_stream> == routes::route::tag_invoke);
static_assert(route_of<member_get_stream_stream> == routes::route::member_get_stream);
static_assert(route_of<member_stream_stream> == routes::route::member_stream);
static_assert(route_of<rmm_like_stream> == routes::route::handle);
// Every route is noexcept, so no edge gets an exception path.
static_assert(streamlike::nothrow_stream_like<tag_invoke_stream&>);
static_assert(streamlike::nothrow_stream_like<member_get_stream_stream&>);
static_assert(streamlike::nothrow_stream_like<member_stream_stream&>);
static_assert(streamlike::nothrow_stream_like<rmm_like_stream&>);
static_assert(streamlike::nothrow_stream_like<cuda::stream_ref&>);

// ---- The benchmarks. -----------------------------------------------------------------------------
// Each iteration: the stream object is made opaque (DoNotOptimize: the compiler must assume it
// changed, so it cannot hoist or constant-fold the handle), then passed as an lvalue through the
// edge, as a caller holding a stream would. The loop is the same shape for every route.

void plain_function_loop(benchmark::State& state, cudaStream_t handle) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(handle);
    api_edge_raw(handle);
  }
}

void raw_ref_loop(benchmark::State& state, cudaStream_t handle) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(handle);
    api_edge_raw_ref(handle);
  }
}

template <class Stream>
void route_loop(benchmark::State& state, Stream stream) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(stream);
    api_edge(stream);
  }
}

template <class Stream>
void by_value_loop(benchmark::State& state, Stream stream) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(stream);
    api_edge_by_value(stream);
  }
}

template <class Stream>
void register_route(const std::string& name, Stream stream) {
  benchmark::RegisterBenchmark(("route/" + name).c_str(), route_loop<Stream>, stream);
  benchmark::RegisterBenchmark(("by_value/" + name).c_str(), by_value_loop<Stream>, stream);
}

// One call of a route's edge, for the rounds: the stream object, a global of its type, made
// opaque and passed as an lvalue, as route_loop does.
cudaStream_t round_handle = fake_handle(0x2000);
cudaStream_t round_handle_again = fake_handle(0x2100);
streamlike::stream_view round_view{fake_handle(0x3000)};
cuda::stream_ref round_ref{fake_handle(0x4000)};
tag_invoke_stream round_tag_invoke{fake_handle(0x5000)};
member_get_stream_stream round_member_get_stream{fake_handle(0x6000)};
member_stream_stream round_member_stream{fake_handle(0x7000)};
rmm_like_stream round_rmm_like{fake_handle(0x8000)};

template <auto& stream>
void route_call() {
  benchmark::DoNotOptimize(stream);
  api_edge(stream);
}

// rounds/routes (bench/rounds.hpp): every route/ row and the control in blocks of 100,000 calls,
// shuffled each round; the timed verdicts are read from it, its counters named as the rows.
using bench_rounds::make_way;
constexpr bench_rounds::way route_ways[] = {
    make_way<route_call<round_handle>>("route/cudaStream_t"),
    make_way<route_call<round_handle_again>>("control/route_cudaStream_t_again"),
    make_way<route_call<round_view>>("route/stream_view"),
    make_way<route_call<round_ref>>("route/cuda::stream_ref"),
    make_way<route_call<round_tag_invoke>>("route/tag_invoke_friend"),
    make_way<route_call<round_member_get_stream>>("route/member_get_stream"),
    make_way<route_call<round_member_stream>>("route/member_stream"),
    make_way<route_call<round_rmm_like>>("route/rmm_like_both_conversions"),
};
std::mt19937 round_order(20261203);
void route_rounds(benchmark::State& state) { bench_rounds::run_rounds(state, route_ways, 100'000, round_order); }

// Names are what ratios.py prints; route/cudaStream_t is what it divides by, route/ and control/
// rows are judged, diag/ and by_value/ rows are diagnostics it does not judge.
void register_all() {
  register_route("cudaStream_t", fake_handle(0x2000)); // the baseline
  // The baseline again, under another name: its ratio is the noise floor of the run. A route
  // can only be told apart from the baseline by more than this control differs from it.
  benchmark::RegisterBenchmark("control/route_cudaStream_t_again", route_loop<cudaStream_t>, fake_handle(0x2100));
  benchmark::RegisterBenchmark("diag/cudaStream_t->plain_function", plain_function_loop, fake_handle(0x1000));
  benchmark::RegisterBenchmark("diag/cudaStream_t&->plain_function", raw_ref_loop, fake_handle(0x1200));
  register_route("stream_view", streamlike::stream_view{fake_handle(0x3000)});
  register_route("cuda::stream_ref", cuda::stream_ref{fake_handle(0x4000)});
  register_route("tag_invoke_friend", tag_invoke_stream{fake_handle(0x5000)});
  register_route("member_get_stream", member_get_stream_stream{fake_handle(0x6000)});
  register_route("member_stream", member_stream_stream{fake_handle(0x7000)});
  register_route("rmm_like_both_conversions", rmm_like_stream{fake_handle(0x8000)});
  bench_rounds::register_rounds("rounds/routes", route_rounds);
}

} // namespace bench_routes

int main(int argc, char** argv) {
  bench_routes::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
