// The adapter that docs/adapters.md shows for a library streamlike does not cover (cuSPARSE),
// compiled from the page itself (extract_docs_example.py), so the page cannot drift from code that
// works. Host cases need no device; the cases of the doctest suite "gpu" make real handles.
#include "docs_cusparse_adapter.hpp"

#include <streamlike/stream_like.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <string>

using streamlike::stream_view;

TEST_CASE("the page's ten lines make cusparseHandle_t stream_like") {
  static_assert(streamlike::stream_like<cusparseHandle_t>);
  static_assert(streamlike::stream_like<const cusparseHandle_t&>);
  CHECK(true); // the assertions above are the test
}

TEST_CASE("a null handle throws streamlike::error naming cuSPARSE's status, as the page promises") {
  try {
    static_cast<void>(streamlike::get_stream(cusparseHandle_t{}));
    FAIL("get_stream of a null cusparseHandle_t returned");
  } catch (const streamlike::error& e) {
    CHECK(std::string(e.what()).find("CUSPARSE_STATUS") != std::string::npos);
  }
}

TEST_SUITE("gpu") {
  TEST_CASE("a real handle: cuSPARSE's default stream is the legacy one, a set stream is seen") {
    cusparseHandle_t handle = nullptr;
    REQUIRE(cusparseCreate(&handle) == CUSPARSE_STATUS_SUCCESS);
    CHECK(streamlike::get_stream(handle) == stream_view::legacy_default());
    auto owner = streamlike::unique_stream::create();
    REQUIRE(cusparseSetStream(handle, owner.get()) == CUSPARSE_STATUS_SUCCESS);
    CHECK(streamlike::get_stream(handle) == owner.view());
    cusparseDestroy(handle);
  }
}
