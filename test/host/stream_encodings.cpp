// Tests for streamlike/stream_encodings.hpp: every row of the table in the header, with good
// values and bad ones. Bad values throw std::invalid_argument whose message names the convention
// and the value. This translation unit is in the legacy default-stream mode (default_stream.cpp
// covers both modes of from_address(0)).
#include <streamlike/stream_encodings.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

using streamlike::stream_view;
using host_test::contains;

namespace {

constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
constexpr std::uint64_t uint64_max = std::numeric_limits<std::uint64_t>::max();
// A realistic heap address, as a Python int would carry it.
constexpr std::int64_t typical_handle = 0x7f3a'1c00'4a10;

stream_view handle(std::uint64_t address) {
  return stream_view{reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(address))};
}

// The what() of the std::invalid_argument that `f` throws; fails the test if it throws nothing or
// something else.
template <class F>
std::string invalid_argument_message(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (...) {
    FAIL("threw something other than std::invalid_argument");
  }
  FAIL("did not throw");
  return {};
}

} // namespace

// --- __cuda_stream__ ------------------------------------------------------------------------------

TEST_CASE("from_cuda_stream_protocol: version 0 with a good address") {
  // (0, 0) is what CuPy's null stream and numba's default stream export: the legacy default.
  CHECK(streamlike::from_cuda_stream_protocol(0, 0) == stream_view::legacy_default());
  CHECK(streamlike::from_cuda_stream_protocol(0, 1) == stream_view::legacy_default());
  CHECK(streamlike::from_cuda_stream_protocol(0, 2) == stream_view::per_thread_default());
  CHECK(streamlike::from_cuda_stream_protocol(0, 3) == handle(3));
  CHECK(streamlike::from_cuda_stream_protocol(0, typical_handle) == handle(typical_handle));
  CHECK(streamlike::from_cuda_stream_protocol(0, int64_max) == handle(int64_max));
}

TEST_CASE("from_cuda_stream_protocol: a version other than 0 is refused, naming the tuple") {
  for (const std::int64_t version : {std::int64_t{1}, std::int64_t{2}, std::int64_t{-1}, int64_min}) {
    CAPTURE(version);
    const std::string message =
        invalid_argument_message([&] { (void)streamlike::from_cuda_stream_protocol(version, 5); });
    CHECK(contains(message, "__cuda_stream__"));
    CHECK(contains(message, "(" + std::to_string(version) + ", 5)"));
  }
}

TEST_CASE("from_cuda_stream_protocol: a negative address is refused, naming it") {
  for (const std::int64_t address : {std::int64_t{-1}, std::int64_t{-2}, int64_min}) {
    CAPTURE(address);
    const std::string message =
        invalid_argument_message([&] { (void)streamlike::from_cuda_stream_protocol(0, address); });
    CHECK(contains(message, "__cuda_stream__"));
    CHECK(contains(message, "(0, " + std::to_string(address) + ")"));
  }
}

// --- DLPack ---------------------------------------------------------------------------------------

TEST_CASE("from_dlpack_stream: None, 1, 2 and handles") {
  CHECK(streamlike::from_dlpack_stream(std::nullopt) == stream_view::legacy_default());
  CHECK(streamlike::from_dlpack_stream(1) == stream_view::legacy_default());
  CHECK(streamlike::from_dlpack_stream(2) == stream_view::per_thread_default());
  CHECK(streamlike::from_dlpack_stream(3) == handle(3));
  CHECK(streamlike::from_dlpack_stream(typical_handle) == handle(typical_handle));
  CHECK(streamlike::from_dlpack_stream(int64_max) == handle(int64_max));
}

TEST_CASE("from_dlpack_stream: -1 asks for no synchronization, an empty result") {
  const std::optional<stream_view> none = streamlike::from_dlpack_stream(-1);
  CHECK_FALSE(none.has_value());
}

TEST_CASE("from_dlpack_stream: 0 and other negative values are refused, naming DLPack and the value") {
  for (const std::int64_t value : {std::int64_t{0}, std::int64_t{-2}, std::int64_t{-3}, int64_min}) {
    CAPTURE(value);
    const std::string message = invalid_argument_message([&] { (void)streamlike::from_dlpack_stream(value); });
    CHECK(contains(message, "DLPack"));
    CHECK(contains(message, "value " + std::to_string(value)));
  }
}

// --- __cuda_array_interface__ ---------------------------------------------------------------------

TEST_CASE("from_cuda_array_interface_stream: None or absent asks for no synchronization") {
  CHECK_FALSE(streamlike::from_cuda_array_interface_stream(std::nullopt).has_value());
}

TEST_CASE("from_cuda_array_interface_stream: 1, 2 and handles") {
  CHECK(streamlike::from_cuda_array_interface_stream(1) == stream_view::legacy_default());
  CHECK(streamlike::from_cuda_array_interface_stream(2) == stream_view::per_thread_default());
  CHECK(streamlike::from_cuda_array_interface_stream(3) == handle(3));
  CHECK(streamlike::from_cuda_array_interface_stream(typical_handle) == handle(typical_handle));
  CHECK(streamlike::from_cuda_array_interface_stream(int64_max) == handle(int64_max));
}

TEST_CASE("from_cuda_array_interface_stream: 0 and negative values are refused, naming the field and the value") {
  for (const std::int64_t value : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{-2}, int64_min}) {
    CAPTURE(value);
    const std::string message =
        invalid_argument_message([&] { (void)streamlike::from_cuda_array_interface_stream(value); });
    CHECK(contains(message, "__cuda_array_interface__"));
    CHECK(contains(message, "value " + std::to_string(value)));
  }
}

// --- CUDA runtime addresses -----------------------------------------------------------------------

TEST_CASE("from_address: 1, 2 and handles follow the CUDA runtime") {
  CHECK(streamlike::from_address(1) == stream_view{cudaStreamLegacy});
  CHECK(streamlike::from_address(2) == stream_view{cudaStreamPerThread});
  CHECK(streamlike::from_address(3) == handle(3));
  CHECK(streamlike::from_address(typical_handle) == handle(typical_handle));
  CHECK(streamlike::from_address(int64_max) == handle(int64_max));
  // Any integer type: unsigned, as uintptr_t carries an address, up to the largest.
  CHECK(streamlike::from_address(std::uintptr_t{2}) == stream_view::per_thread_default());
  CHECK(streamlike::from_address(uint64_max) == handle(uint64_max));
  CHECK(streamlike::from_address(static_cast<unsigned char>(1)) == stream_view::legacy_default());
}

TEST_CASE("from_address: 0 is this translation unit's default stream, as an explicit handle") {
  // This TU is compiled without CUDA_API_PER_THREAD_DEFAULT_STREAM: 0 means cudaStreamLegacy.
  CHECK(streamlike::from_address(0) == stream_view::legacy_default());
  CHECK(streamlike::from_address(0U) == stream_view::legacy_default());
  // Never the ambiguous handle 0 itself.
  CHECK(streamlike::from_address(0).get() != cudaStream_t{});
}

TEST_CASE("from_address: negative values are refused, naming from_address and the value") {
  for (const std::int64_t value : {std::int64_t{-1}, std::int64_t{-2}, int64_min}) {
    CAPTURE(value);
    const std::string message = invalid_argument_message([&] { (void)streamlike::from_address(value); });
    CHECK(contains(message, "from_address"));
    CHECK(contains(message, "value " + std::to_string(value)));
  }
  // Narrow signed types are checked too, not wrapped around.
  const std::string message = invalid_argument_message([] { (void)streamlike::from_address(-1); });
  CHECK(contains(message, "value -1"));
  CHECK_THROWS_AS((void)streamlike::from_address(static_cast<signed char>(-1)), std::invalid_argument);
}

template <class T>
concept from_address_accepts = requires(T t) {
  streamlike::from_address(t);
};

TEST_CASE("from_address takes integers only, and not bool") {
  static_assert(from_address_accepts<int>);
  static_assert(from_address_accepts<std::uintptr_t>);
  static_assert(from_address_accepts<std::int64_t>);
  static_assert(!from_address_accepts<bool>);
  static_assert(!from_address_accepts<double>);
  static_assert(!from_address_accepts<std::nullptr_t>);
  static_assert(!from_address_accepts<void*>);
}
