// streamlike/stream_view.hpp on a device: the implicit conversions to and from cudaStream_t and
// cuda::stream_ref keep the same stream, seen through CUDA and CCCL calls on view.get(), so that
// what is checked is the handle itself. stream_view's own queries are tested in
// test/gpu/stream_view_queries.cu.
#include "gpu_support.hpp"

#include <streamlike/stream_view.hpp>

#include <doctest/doctest.h>

#include <unordered_set>

namespace {
using gpu_test::owned_stream;
using streamlike::stream_view;
} // namespace

TEST_CASE("round trip through cuda::stream_ref keeps the stream") {
  owned_stream s;
  const stream_view view{s.get()};
  const cuda::stream_ref ref = view; // implicit to stream_ref
  const stream_view back = ref;      // and back
  CHECK(back == view);
  gpu_test::check_runs_on(s.get(), back);
}

TEST_CASE("CCCL's stream_ref sees the state of the stream the view names") {
  owned_stream s;
  const stream_view view{s.get()};
  const cuda::stream_ref ref = view;

  gpu_test::gate g;
  GPU_REQUIRE_CUDA(g.close(view)); // implicit to cudaStream_t
  if (g.holds("CCCL's ready() says false while the stream is held")) CHECK_FALSE(ref.ready()); // cudaStreamQuery
  g.open();
  ref.wait(); // CCCL 3.0: cudaStreamSynchronize; throws on error
  CHECK(ref.ready());
  CHECK(cudaStreamQuery(view.get()) == cudaSuccess);
  CHECK_FALSE(g.timed_out());
}

TEST_CASE("views of distinct live streams are distinct, and hash apart in a set") {
  owned_stream a, b;
  const stream_view va{a.get()}, vb{b.get()};
  CHECK(va != vb);
  CHECK(va == stream_view{a.get()});
  const std::unordered_set<stream_view> set{va, vb, stream_view{a.get()}};
  CHECK(set.size() == 2);
}
