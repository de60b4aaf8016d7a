// Tests for streamlike/adapters/rmm.hpp: rmm::cuda_stream_view is a view, rmm::cuda_stream an
// owner, rmm::cuda_stream_pool is deliberately not stream_like while the streams it hands out are.
// Built against RMM's headers and the CCCL RMM ships (RMM 26.x needs CCCL 3.3+), linked to librmm.
// Host cases use fake handles (never dereferenced); the cases of the doctest suite "gpu" make real streams.
#include <streamlike/adapters/rmm.hpp>

#include <streamlike/export_stream.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_owner.hpp>

#include <rmm/device_buffer.hpp>
#include <rmm/device_uvector.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <type_traits>
#include <utility>

using streamlike::stream_view;

namespace {
cudaStream_t fake_handle(std::uintptr_t address) { return reinterpret_cast<cudaStream_t>(address); }
} // namespace

// Built twice: against RMM 26.10, and against a copy of its headers as 26.12 ships them, without
// rmm::cuda_stream_view (test/adapters/rmm_without_cuda_stream_view.py); the build says which
// (STREAMLIKE_TEST_RMM_HAS_CUDA_STREAM_VIEW).
TEST_CASE("the adapter sees whether RMM still has rmm::cuda_stream_view") {
  static_assert(STREAMLIKE_RMM_HAS_CUDA_STREAM_VIEW == STREAMLIKE_TEST_RMM_HAS_CUDA_STREAM_VIEW);
  CHECK(RMM_VERSION_MAJOR >= 26);
}

#if STREAMLIKE_RMM_HAS_CUDA_STREAM_VIEW
// rmm::cuda_stream_view is deprecated since RMM 26.x, and still what most RMM-based code passes.
#  if defined(__GNUC__)
#    pragma GCC diagnostic push
#    pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#  endif
TEST_CASE("rmm::cuda_stream_view is a view: stream_like through the core, not exportable") {
  static_assert(streamlike::nothrow_stream_like<rmm::cuda_stream_view>);
  static_assert(streamlike::nothrow_stream_like<const rmm::cuda_stream_view&>);
  // A view carries no ownership, so it cannot promise to keep the stream alive.
  static_assert(!streamlike::stream_exporter<rmm::cuda_stream_view>);
  const rmm::cuda_stream_view view{fake_handle(0x1000)};
  CHECK(streamlike::get_stream(view) == fake_handle(0x1000));
  // And back: RMM takes streamlike's view through its cudaStream_t conversion.
  const rmm::cuda_stream_view from_streamlike{static_cast<cudaStream_t>(stream_view{fake_handle(0x1100)})};
  CHECK(from_streamlike.value() == fake_handle(0x1100));
}
#  if defined(__GNUC__)
#    pragma GCC diagnostic pop
#  endif
#endif // STREAMLIKE_RMM_HAS_CUDA_STREAM_VIEW

TEST_CASE("the cuda::stream_ref RMM's API hands out is stream_like, and RMM takes streamlike's view") {
  static_assert(streamlike::nothrow_stream_like<cuda::stream_ref>);
  const cuda::stream_ref ref = stream_view{fake_handle(0x2000)}; // what RMM's functions take
  CHECK(streamlike::get_stream(ref) == fake_handle(0x2000));
}

TEST_CASE("rmm::cuda_stream is a stream_owner: lvalues are viewed, temporaries refused, rvalues exported") {
  static_assert(streamlike::stream_owner<rmm::cuda_stream>);
  // What RMM's API takes and gives in place of rmm::cuda_stream_view: its conversion to cuda::stream_ref.
  static_assert(std::is_convertible_v<const rmm::cuda_stream&, cuda::stream_ref>);
  static_assert(streamlike::stream_like<rmm::cuda_stream&>);
  static_assert(streamlike::stream_like<const rmm::cuda_stream&>);
  // get_stream checks that the owner still holds a stream, so it may throw.
  static_assert(!streamlike::nothrow_stream_like<rmm::cuda_stream&>);
  static_assert(!streamlike::stream_like<rmm::cuda_stream>);
  static_assert(!streamlike::stream_like<rmm::cuda_stream&&>);
  static_assert(streamlike::stream_exporter<rmm::cuda_stream>);
  static_assert(!streamlike::stream_exporter<rmm::cuda_stream&>);
  // The adapter's route, not the core's stream_ref conversion, is the one taken.
  static_assert(streamlike::tag_invocable<streamlike::get_stream_t, const rmm::cuda_stream&>);
}

TEST_CASE("rmm::cuda_stream_pool is not stream_like; the views it hands out are") {
  // Its get_stream() member hands out the next stream on every call: not one stream.
  static_assert(!streamlike::stream_like<rmm::cuda_stream_pool&>);
  static_assert(!streamlike::stream_like<const rmm::cuda_stream_pool&>);
  using handed_out = decltype(std::declval<const rmm::cuda_stream_pool&>().get_stream());
  static_assert(streamlike::nothrow_stream_like<handed_out>);
  using handed_out_at = decltype(std::declval<const rmm::cuda_stream_pool&>().get_stream(std::size_t{0}));
  static_assert(streamlike::nothrow_stream_like<handed_out_at>);
  CHECK(true); // the assertions above are the test
}

TEST_CASE("RMM containers are stream_like through their stream() member (the core's route 3)") {
  // Their stream as set at the time of the call; they do not own it, so even a temporary is fine.
  static_assert(streamlike::stream_like<const rmm::device_buffer&>);
  static_assert(streamlike::stream_like<rmm::device_buffer>);
  static_assert(streamlike::stream_like<const rmm::device_uvector<int>&>);
  CHECK(true); // the assertions above are the test
}

TEST_SUITE("gpu") {
  TEST_CASE("a real rmm::cuda_stream: viewed in place, then exported and kept alive") {
    rmm::cuda_stream owner; // RMM's default: synchronizes with the legacy default stream
    const cudaStream_t handle = owner.value();
    CHECK(streamlike::get_stream(owner) == handle);

    streamlike::shared_stream shared = streamlike::export_stream(std::move(owner));
    CHECK_FALSE(owner.is_valid()); // moved into the shared_stream
    CHECK(shared.get() == handle);
    CHECK(shared.flags() == cudaStreamDefault); // cached from the live stream RMM made
    auto copy = shared;
    shared.reset();
    CHECK(copy.view().is_done()); // still alive through the copy
  }

  TEST_CASE("a moved-from rmm::cuda_stream is refused with streamlike::error instead of a crash") {
    rmm::cuda_stream owner;
    rmm::cuda_stream taker = std::move(owner);
    CHECK_THROWS_AS(static_cast<void>(streamlike::get_stream(owner)), streamlike::error);
    CHECK_THROWS_AS(static_cast<void>(streamlike::export_stream(std::move(owner))), streamlike::error);
    CHECK(streamlike::get_stream(taker) == taker.value());
  }

  TEST_CASE("rmm::cuda_stream_pool: one pool, successive get_stream() calls, different streams") {
    rmm::cuda_stream_pool pool{4};
    // Why the pool is not stream_like: asking twice gives two streams.
    const auto first = pool.get_stream();
    const auto second = pool.get_stream();
    CHECK(streamlike::get_stream(first) != streamlike::get_stream(second));
    // A stream taken by index is stable, and works wherever streamlike takes a stream.
    const auto taken = pool.get_stream(std::size_t{1});
    CHECK(streamlike::get_stream(taken) == pool.get_stream(std::size_t{1}).get());
    CHECK(streamlike::get_stream(taken).is_done());
  }

  TEST_CASE("an rmm::device_buffer yields the stream it was made on") {
    rmm::cuda_stream owner;
    const rmm::device_buffer buffer(1024, cuda::stream_ref{owner.value()});
    CHECK(streamlike::get_stream(buffer) == owner.value());
  }
}
