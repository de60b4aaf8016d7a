// streamlike/get_stream.hpp on a device: every route of get_stream yields a view on which work
// really runs on the wrapped stream, in order with the work already there.
#include "gpu_support.hpp"

#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>

#include <doctest/doctest.h>

#include <utility>

namespace {

using gpu_test::check_runs_on;
using gpu_test::owned_stream;
using streamlike::stream_view;

// The API edge as users write it: accept any stream-like argument, convert once.
template <streamlike::stream_like S>
stream_view edge(S&& s) {
  return streamlike::get_stream(std::forward<S>(s));
}

// Route 1, a hidden friend.
class friend_queue {
public:
  explicit friend_queue(cudaStream_t s) : stream_(s) {}

private:
  friend stream_view tag_invoke(streamlike::get_stream_t, const friend_queue& q) noexcept { return q.stream_; }
  cudaStream_t stream_;
};

} // namespace

// Route 1, an overload in the type's own namespace (found by ADL like the friend).
namespace vendor {
struct handle_box {
  cudaStream_t stream;
};
inline cuda::stream_ref tag_invoke(streamlike::get_stream_t, const handle_box& box) noexcept { return box.stream; }
} // namespace vendor

// A named namespace, not an anonymous one: the members that must lose below are never called,
// and nvcc warns about unreferenced functions with internal linkage.
namespace route_types {

// Route 3, CCCL style.
struct with_get_stream {
  cuda::stream_ref s;
  [[nodiscard]] cuda::stream_ref get_stream() const noexcept { return s; }
};

// Route 3, stream().
struct with_stream {
  cudaStream_t s;
  [[nodiscard]] cudaStream_t stream() const noexcept { return s; }
};

// Several routes at once, each to a different stream: the order of the routes (docs/routes.md,
// "Opting a type in") decides which one the work lands on.
struct tag_and_members {
  cudaStream_t by_tag, by_member;
  friend stream_view tag_invoke(streamlike::get_stream_t, const tag_and_members& t) noexcept { return t.by_tag; }
  [[nodiscard]] cudaStream_t get_stream() const noexcept { return by_member; }
  [[nodiscard]] cudaStream_t stream() const noexcept { return by_member; }
};
struct get_stream_and_stream {
  cudaStream_t by_get_stream, by_stream;
  [[nodiscard]] cudaStream_t get_stream() const noexcept { return by_get_stream; }
  [[nodiscard]] cudaStream_t stream() const noexcept { return by_stream; }
};

} // namespace route_types

using namespace route_types;

TEST_CASE("raw cudaStream_t: work runs on that stream") {
  owned_stream s;
  const stream_view view = edge(s.get());
  CHECK(view.get() == s.get());
  check_runs_on(s.get(), view);
}

TEST_CASE("cuda::stream_ref: work runs on the referenced stream") {
  owned_stream s;
  const stream_view view = edge(cuda::stream_ref{s.get()});
  CHECK(view.get() == s.get());
  check_runs_on(s.get(), view);
}

TEST_CASE("stream_view passes through unchanged") {
  owned_stream s;
  const stream_view original{s.get()};
  const stream_view view = edge(original);
  CHECK(view == original);
  check_runs_on(s.get(), view);
}

TEST_CASE("tag_invoke hidden friend wrapping a created stream") {
  owned_stream s;
  friend_queue queue{s.get()};
  SUBCASE("lvalue") { check_runs_on(s.get(), edge(queue)); }
  SUBCASE("const lvalue") { check_runs_on(s.get(), edge(std::as_const(queue))); }
  SUBCASE("rvalue of a non-owning type") { check_runs_on(s.get(), edge(friend_queue{s.get()})); }
}

TEST_CASE("tag_invoke overload in the type's namespace") {
  owned_stream s;
  check_runs_on(s.get(), edge(vendor::handle_box{s.get()}));
}

TEST_CASE("member get_stream() (CCCL style)") {
  owned_stream s;
  const with_get_stream obj{s.get()};
  check_runs_on(s.get(), edge(obj));
}

TEST_CASE("member stream()") {
  owned_stream s;
  const with_stream obj{s.get()};
  check_runs_on(s.get(), edge(obj));
}

#if STREAMLIKE_HAS_CUDA_GET_STREAM
// Only where the CCCL in use has cuda::get_stream_t (3.1+); CUDA 13.0's CCCL 3.0 does not.
namespace {
struct with_query {
  cudaStream_t s;
  [[nodiscard]] cuda::stream_ref query(cuda::get_stream_t) const noexcept { return s; }
};
} // namespace

TEST_CASE("member query(cuda::get_stream_t)") {
  owned_stream s;
  check_runs_on(s.get(), edge(with_query{s.get()}));
}
#endif

TEST_CASE("route order on a device: tag_invoke wins over the members") {
  owned_stream tagged, member;
  const tag_and_members obj{tagged.get(), member.get()};
  // Held behind a gate on the tag_invoke stream: work on the member stream would not wait.
  check_runs_on(tagged.get(), edge(obj));
}

TEST_CASE("route order on a device: get_stream() wins over stream()") {
  owned_stream first, second;
  const get_stream_and_stream obj{first.get(), second.get()};
  check_runs_on(first.get(), edge(obj));
}

TEST_CASE("the default streams pass through as handles") {
  SUBCASE("legacy") { check_runs_on(cudaStreamLegacy, edge(stream_view::legacy_default())); }
  SUBCASE("per-thread") { check_runs_on(cudaStreamPerThread, edge(stream_view::per_thread_default())); }
}

TEST_CASE("views of different created streams do not order with each other") {
  // The counterpart of check_runs_on: the gate on one stream must not hold work on another, or
  // every check above would pass whatever stream the view named.
  owned_stream held, free;
  gpu_test::mapped_ints flag{1};
  gpu_test::gate g;
  GPU_REQUIRE_CUDA(g.close(held.get()));
  GPU_REQUIRE_CUDA(gpu_test::launch_write(edge(free.get()), flag.device(), 5));
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(edge(free.get()))); // returns while `held` is still held
  if (g.holds("`held` is still held after the free stream's work is done") &&
      gpu_test::check_possible(gpu_test::measure_concurrency().kernels_overlap,
                               "a kernel on another stream runs while one stream is held")) {
    CHECK(flag.read(0) == 5);
    CHECK(cudaStreamQuery(held.get()) == cudaErrorNotReady);
  }
  g.open();
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(held.get()));
  CHECK_FALSE(g.timed_out());
}
