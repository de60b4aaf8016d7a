// streamlike/stream_encodings.hpp on a device: a created stream's address, handed over as an
// integer in each convention, decodes to a view on which work really runs on that stream; the
// named default-stream values decode to the streams the runtime knows by those handles.
#include "gpu_support.hpp"

#include <streamlike/stream_encodings.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>

namespace {

using gpu_test::check_runs_on;
using gpu_test::owned_stream;
using gpu_test::stream_id;
using streamlike::stream_view;

std::int64_t address_of(cudaStream_t s) { return static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(s)); }

} // namespace

TEST_CASE("__cuda_stream__ (0, address) of a created stream") {
  owned_stream s;
  const stream_view view = streamlike::from_cuda_stream_protocol(0, address_of(s.get()));
  CHECK(view.get() == s.get());
  check_runs_on(s.get(), view);
}

TEST_CASE("DLPack stream=address of a created stream") {
  owned_stream s;
  const std::optional<stream_view> view = streamlike::from_dlpack_stream(address_of(s.get()));
  REQUIRE(view.has_value());
  check_runs_on(s.get(), *view);
}

TEST_CASE("__cuda_array_interface__ stream=address of a created stream") {
  owned_stream s;
  const std::optional<stream_view> view = streamlike::from_cuda_array_interface_stream(address_of(s.get()));
  REQUIRE(view.has_value());
  check_runs_on(s.get(), *view);
}

TEST_CASE("from_address of a created stream") {
  owned_stream s;
  check_runs_on(s.get(), streamlike::from_address(reinterpret_cast<std::uintptr_t>(s.get())));
}

TEST_CASE("the default-stream values name the runtime's default streams") {
  const unsigned long long legacy = stream_id(cudaStreamLegacy);
  const unsigned long long per_thread = stream_id(cudaStreamPerThread);
  REQUIRE(legacy != per_thread);

  // (0, 0) is CuPy's null stream and numba's default stream: the legacy default stream.
  CHECK(stream_id(streamlike::from_cuda_stream_protocol(0, 0)) == legacy);
  CHECK(stream_id(*streamlike::from_dlpack_stream(std::nullopt)) == legacy);
  CHECK(stream_id(*streamlike::from_dlpack_stream(1)) == legacy);
  CHECK(stream_id(*streamlike::from_dlpack_stream(2)) == per_thread);
  CHECK(stream_id(*streamlike::from_cuda_array_interface_stream(1)) == legacy);
  CHECK(stream_id(*streamlike::from_cuda_array_interface_stream(2)) == per_thread);
  // from_address(0) follows this TU's mode (legacy); default_stream.cu covers the per-thread mode.
  CHECK(stream_id(streamlike::from_address(0)) == legacy);
}

TEST_CASE("work queued on a decoded default stream runs on it") {
  check_runs_on(cudaStreamLegacy, streamlike::from_cuda_stream_protocol(0, 0));
  check_runs_on(cudaStreamPerThread, *streamlike::from_dlpack_stream(2));
}
