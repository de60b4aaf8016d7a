// Tests for streamlike/adapters/cublas.hpp: a cublasHandle_t is stream_like through
// cublasGetStream, which get_stream only reads. Host cases need no device; the cases of the
// doctest suite "gpu" make real handles.
#include <streamlike/adapters/cublas.hpp>

#include <streamlike/stream_like.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <string>

using streamlike::stream_view;

TEST_CASE("cublasHandle_t is stream_like (not noexcept: a bad handle throws)") {
  static_assert(streamlike::stream_like<cublasHandle_t>);
  static_assert(streamlike::stream_like<const cublasHandle_t&>);
  static_assert(!streamlike::nothrow_stream_like<cublasHandle_t>);
  CHECK(true); // the assertions above are the test
}

TEST_CASE("a null handle throws streamlike::error naming cuBLAS's status") {
  const cublasHandle_t none = nullptr;
  try {
    static_cast<void>(streamlike::get_stream(none));
    FAIL("get_stream of a null cublasHandle_t returned");
  } catch (const streamlike::error& e) {
    CHECK(e.code() == cudaErrorInvalidResourceHandle);
    CHECK(std::string(e.what()).find("CUBLAS_STATUS_NOT_INITIALIZED") != std::string::npos);
  }
}

namespace {
// A cuBLAS handle for one test case.
struct handle_owner {
  cublasHandle_t handle = nullptr;
  handle_owner() { REQUIRE(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS); }
  ~handle_owner() { cublasDestroy(handle); }
  handle_owner(const handle_owner&) = delete;
  handle_owner& operator=(const handle_owner&) = delete;
};

cudaStream_t stream_of(cublasHandle_t handle) {
  cudaStream_t s = nullptr;
  REQUIRE(cublasGetStream(handle, &s) == CUBLAS_STATUS_SUCCESS);
  return s;
}
} // namespace

TEST_SUITE("gpu") {
  TEST_CASE("a new handle works on cuBLAS's default stream, the legacy one") {
    const handle_owner h;
    CHECK(stream_of(h.handle) == cudaStream_t{});
    CHECK(streamlike::get_stream(h.handle) == stream_view::legacy_default());
  }

  TEST_CASE("get_stream yields the stream set on the handle, and leaves it set") {
    const handle_owner h;
    auto owner = streamlike::unique_stream::create();
    REQUIRE(cublasSetStream(h.handle, owner.get()) == CUBLAS_STATUS_SUCCESS);
    CHECK(streamlike::get_stream(h.handle) == owner.view());
    CHECK(streamlike::get_stream(h.handle) == owner.view()); // asking twice changes nothing
    CHECK(stream_of(h.handle) == owner.get());

    REQUIRE(cublasSetStream(h.handle, cudaStreamPerThread) == CUBLAS_STATUS_SUCCESS);
    CHECK(streamlike::get_stream(h.handle) == stream_view::per_thread_default());
  }
}
