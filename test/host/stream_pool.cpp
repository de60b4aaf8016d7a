// Tests for streamlike/stream_pool.hpp that need no GPU: size 0 is refused before any CUDA
// call, construction without a device throws streamlike::error, and the interface's promises.
#include <streamlike/stream_pool.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

using streamlike::stream_pool;
using host_test::contains;
using host_test::thrown;
using host_test::device_present;
using host_test::check_no_device_error;

TEST_CASE("stream_pool: 16 streams by default, not copyable, not made implicitly from a size") {
  static_assert(stream_pool::default_size == 16); // as rmm::cuda_stream_pool
  static_assert(!std::is_copy_constructible_v<stream_pool>);
  static_assert(!std::is_copy_assignable_v<stream_pool>);
  static_assert(std::is_constructible_v<stream_pool, std::size_t>);
  static_assert(!std::is_convertible_v<std::size_t, stream_pool>);
  static_assert(!std::is_convertible_v<streamlike::stream_options, stream_pool>);
  static_assert(std::is_constructible_v<stream_pool, std::size_t, const streamlike::stream_options&>);
  static_assert(std::is_constructible_v<stream_pool, const streamlike::stream_options&>);
  // Handing out a stream cannot fail.
  static_assert(noexcept(std::declval<stream_pool&>().get()));
  static_assert(noexcept(std::declval<const stream_pool&>().at(0)));
  static_assert(noexcept(std::declval<const stream_pool&>().size()));
  static_assert(std::is_same_v<decltype(std::declval<stream_pool&>().get()), streamlike::shared_stream>);
}

TEST_CASE("stream_pool of size 0 is refused with std::invalid_argument naming the size, before any CUDA call") {
  // Without a driver any CUDA call would throw streamlike::error instead: std::invalid_argument
  // shows the size is checked first.
  for (const auto& e : {thrown<std::invalid_argument>([] { stream_pool pool(0); }), thrown<std::invalid_argument>([] {
                          stream_pool pool(0, streamlike::stream_options{.priority = -1});
                        })}) {
    REQUIRE(e.has_value());
    const std::string what = e->what();
    CHECK_MESSAGE(contains(what, "stream_pool"), what);
    CHECK_MESSAGE(contains(what, "size 0"), what);
  }
}

TEST_CASE("stream_pool without a device throws streamlike::error naming the CUDA error") {
  if (device_present()) {
    MESSAGE("a CUDA device is present: skipping the no-device checks");
    return;
  }
  // The pool creates shared_streams: the error names shared_stream::create.
  check_no_device_error(thrown<streamlike::error>([] { stream_pool pool; }), "shared_stream::create");
  check_no_device_error(thrown<streamlike::error>([] { stream_pool pool(4); }), "shared_stream::create");
  check_no_device_error(thrown<streamlike::error>([] { stream_pool pool(streamlike::stream_options{.device = 0}); }),
                        "shared_stream::create");
}
