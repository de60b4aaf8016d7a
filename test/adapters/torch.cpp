// Tests for streamlike/adapters/torch.hpp: c10::cuda::CUDAStream's three kinds of stream (default,
// pool, external), viewed, exported or refused, with the device taken from c10's metadata.
// Built only where torch's C++ headers are found (-Dtorch=auto: an importable torch). Nearly every
// c10 stream call needs a device, so apart from the first cases this is the doctest suite "gpu".
#include <streamlike/adapters/torch.hpp>

#include <streamlike/export_stream.hpp>
#include <streamlike/stream_like.hpp>

#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <doctest/doctest.h>

#include <stdexcept>
#include <utility>

using c10::cuda::CUDAStream;
using streamlike::stream_view;
namespace torch_adapter = streamlike::adapters::torch;

namespace {
// A CUDAStream value made from its parts, as c10 makes them: no CUDA call, no device needed.
CUDAStream made_up(c10::DeviceIndex device, c10::StreamId id) {
  return CUDAStream(CUDAStream::UNCHECKED,
                    c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::CUDA, device), id));
}
} // namespace

TEST_CASE("CUDAStream is stream_like and exportable, through the adapter's routes") {
  static_assert(streamlike::stream_like<const CUDAStream&>);
  static_assert(streamlike::stream_like<CUDAStream>);                 // a value naming a stream, not an owner
  static_assert(!streamlike::nothrow_stream_like<const CUDAStream&>); // c10 may throw
  static_assert(streamlike::stream_exporter<const CUDAStream&>);
  static_assert(streamlike::tag_invocable<streamlike::get_stream_t, const CUDAStream&>);
  CHECK(true); // the assertions above are the test
}

TEST_CASE("device_of reads c10's metadata: no CUDA call, so even a device this machine lacks answers") {
  CHECK(torch_adapter::device_of(made_up(7, 0)) == 7);
  CHECK(torch_adapter::device_of(made_up(0, 0)) == 0);
}

TEST_SUITE("gpu") {
  TEST_CASE("the default stream is the legacy default stream, exported as the immortal one") {
    const CUDAStream s = c10::cuda::getDefaultCUDAStream(0);
    CHECK(torch_adapter::kind_of(s) == torch_adapter::stream_kind::default_stream);
    CHECK(s.stream() == cudaStream_t{});                               // c10's handle 0 ...
    CHECK(streamlike::get_stream(s) == stream_view::legacy_default()); // ... made explicit
    const auto shared = streamlike::export_stream(s);
    CHECK(shared.get() == cudaStreamLegacy);
    CHECK(shared == streamlike::shared_stream::legacy_default());
  }

  TEST_CASE("a pool stream is viewed and exported without ownership") {
    const CUDAStream s = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, 0);
    CHECK(torch_adapter::kind_of(s) == torch_adapter::stream_kind::pool);
    CHECK(streamlike::get_stream(s) == s.stream());
    CHECK(torch_adapter::device_of(s) == 0);

    auto shared = streamlike::export_stream(s);
    CHECK(shared.get() == s.stream());
    CHECK(shared.device() == s.device_index());
    CHECK(shared.priority() == s.priority());
    shared.reset(); // releasing the last reference destroys nothing: c10 keeps using the stream
    CHECK(streamlike::get_stream(s).is_done());
    CHECK(s.query());

    const CUDAStream high = c10::cuda::getStreamFromPool(/*isHighPriority=*/true, 0);
    CHECK(torch_adapter::kind_of(high) == torch_adapter::stream_kind::pool);
    CHECK(streamlike::export_stream(high).priority() == high.priority());
  }

  TEST_CASE("an external stream is viewed, and its export is refused") {
    cudaStream_t raw = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking) == cudaSuccess);
    {
      const CUDAStream s = c10::cuda::getStreamFromExternal(raw, 0);
      CHECK(torch_adapter::kind_of(s) == torch_adapter::stream_kind::external);
      CHECK(streamlike::get_stream(s) == raw);
      CHECK_THROWS_AS(static_cast<void>(streamlike::export_stream(s)), std::invalid_argument);
    }
    CHECK(cudaStreamDestroy(raw) == cudaSuccess);
  }

  TEST_CASE("torch's current stream reaches a generic function taking any stream") {
    const CUDAStream pool = c10::cuda::getStreamFromPool(false, 0);
    const c10::cuda::CUDAStreamGuard guard(pool);
    const auto edge = []<streamlike::stream_like S>(S&& s) { return streamlike::get_stream(std::forward<S>(s)); };
    CHECK(edge(c10::cuda::getCurrentCUDAStream(0)) == pool.stream());
  }
}
