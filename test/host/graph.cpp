// Tests for streamlike/graph.hpp that need no GPU: both owners are one pointer, move-only with
// noexcept moves; empty ones refuse by name; adopt(nullptr) is refused; create() without a driver
// fails the documented way.
#include <streamlike/graph.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <type_traits>
#include <utility>

using host_test::check_no_device_error;
using host_test::contains;
using host_test::device_present;
using host_test::thrown;
using streamlike::graph;
using streamlike::graph_exec;

TEST_CASE("graph and graph_exec are one pointer, move-only, with noexcept moves") {
  static_assert(sizeof(graph) == sizeof(void*));
  static_assert(sizeof(graph_exec) == sizeof(void*));
  static_assert(!std::is_copy_constructible_v<graph> && !std::is_copy_assignable_v<graph>);
  static_assert(!std::is_copy_constructible_v<graph_exec> && !std::is_copy_assignable_v<graph_exec>);
  static_assert(std::is_nothrow_move_constructible_v<graph> && std::is_nothrow_move_assignable_v<graph>);
  static_assert(std::is_nothrow_move_constructible_v<graph_exec> && std::is_nothrow_move_assignable_v<graph_exec>);
  static_assert(std::is_nothrow_destructible_v<graph> && std::is_nothrow_destructible_v<graph_exec>);
}

TEST_CASE("empty owners are false and refuse their operations by name") {
  const graph g;
  const graph_exec e;
  CHECK_FALSE(static_cast<bool>(g));
  CHECK_FALSE(static_cast<bool>(e));
  CHECK(g.get() == nullptr);
  CHECK(e.get() == nullptr);
  const auto instantiate = thrown<streamlike::error>([&] { (void)g.instantiate(); });
  REQUIRE(instantiate.has_value());
  CHECK(contains(instantiate->what(), "graph::instantiate"));
  CHECK(contains(instantiate->what(), "empty"));
  const auto nodes = thrown<streamlike::error>([&] { (void)g.node_count(); });
  REQUIRE(nodes.has_value());
  CHECK(contains(nodes->what(), "graph::node_count"));
  const auto launch = thrown<streamlike::error>([&] { e.launch(cudaStreamPerThread); });
  REQUIRE(launch.has_value());
  CHECK(contains(launch->what(), "graph_exec::launch"));
  const auto upload = thrown<streamlike::error>([&] { e.upload(cudaStreamPerThread); });
  REQUIRE(upload.has_value());
  CHECK(contains(upload->what(), "graph_exec::upload"));
}

TEST_CASE("adopt(nullptr) is refused with std::invalid_argument") {
  const auto g = thrown<std::invalid_argument>([] { (void)graph::adopt(nullptr); });
  REQUIRE(g.has_value());
  CHECK(contains(g->what(), "graph::adopt"));
  const auto e = thrown<std::invalid_argument>([] { (void)graph_exec::adopt(nullptr); });
  REQUIRE(e.has_value());
  CHECK(contains(e->what(), "graph_exec::adopt"));
}

TEST_CASE("adopt and release hand a handle over without a CUDA call") {
  auto* fake = reinterpret_cast<cudaGraph_t>(std::uintptr_t{0x2000}); // NOLINT(performance-no-int-to-ptr)
  graph g = graph::adopt(fake);
  CHECK(g.get() == fake);
  graph moved = std::move(g);
  CHECK_FALSE(static_cast<bool>(g)); // NOLINT(bugprone-use-after-move)
  CHECK(moved.release() == fake);    // released: never handed to cudaGraphDestroy
  CHECK_FALSE(static_cast<bool>(moved));
}

TEST_CASE("without a driver, graph::create throws streamlike::error naming it") {
  if (device_present()) return;
  check_no_device_error(thrown<streamlike::error>([] { (void)graph::create(); }), "graph::create");
}
