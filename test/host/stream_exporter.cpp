// Tests for streamlike/stream_exporter.hpp on its own: the concept over export_stream, for the
// library's own types in each value category (export_stream.cpp tests it for every route).
#include <streamlike/stream_exporter.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <memory>

using streamlike::shared_stream;
using streamlike::stream_exporter;
using streamlike::stream_view;
using streamlike::unique_stream;

TEST_CASE("stream_exporter: shared_stream in every value category, owners only as rvalues, views never") {
  static_assert(stream_exporter<shared_stream&>);
  static_assert(stream_exporter<const shared_stream&>);
  static_assert(stream_exporter<shared_stream>);
  static_assert(stream_exporter<unique_stream>);
  static_assert(!stream_exporter<unique_stream&>);
  static_assert(!stream_exporter<const unique_stream>);
  static_assert(stream_exporter<std::shared_ptr<stream_view>>);
  static_assert(!stream_exporter<stream_view>);
  static_assert(!stream_exporter<cudaStream_t>);
  static_assert(!stream_exporter<int>);
}

TEST_CASE("what a stream_exporter yields keeps the stream: the default streams, exported without a GPU") {
  const shared_stream legacy = shared_stream::legacy_default();
  const shared_stream exported = streamlike::export_stream(legacy);
  CHECK(exported == legacy);
  CHECK(exported.get() == cudaStreamLegacy);
  CHECK(exported.use_count() >= 2);
}
