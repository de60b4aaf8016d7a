// Tests for streamlike/adapters/cccl.hpp and the CCCL routes of the core, built twice: against the
// toolkit's CCCL (3.0 in CUDA 13.0) and against a newer one (3.1+), so that both pass. Which one a
// build sees is checked first (STREAMLIKE_TEST_CCCL_VERSION comes from the build system, which read
// it from the same include path), so a newer CCCL shadowed by the toolkit's cannot pass unnoticed.
//
// Host cases use fake handles (distinct addresses, never dereferenced); the cases of the doctest
// suite "gpu" make real streams.
#include <streamlike/adapters/cccl.hpp>

#include <streamlike/export_stream.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_owner.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <utility>

#if STREAMLIKE_HAS_CUDA_GET_STREAM
#  include <cuda/std/execution>
#endif

using streamlike::stream_view;
namespace cccl = streamlike::adapters::cccl;

namespace {

cudaStream_t fake_handle(std::uintptr_t address) { return reinterpret_cast<cudaStream_t>(address); }

// A type written for CCCL only, each with one of the members cuda::get_stream accepts.
struct has_get_stream_member {
  cudaStream_t handle;
  [[nodiscard]] cuda::stream_ref get_stream() const noexcept { return cuda::stream_ref{handle}; }
};
struct has_stream_member {
  cudaStream_t handle;
  [[nodiscard]] cuda::stream_ref stream() const noexcept { return cuda::stream_ref{handle}; }
};
#if STREAMLIKE_HAS_CUDA_GET_STREAM
struct has_query_member {
  cudaStream_t handle;
  [[nodiscard]] cuda::stream_ref query(cuda::get_stream_t) const noexcept { return cuda::stream_ref{handle}; }
};
#endif

// A type written for streamlike only (tag_invoke): CCCL cannot see it without stream_ref_of.
struct streamlike_only {
  cudaStream_t handle;
  friend stream_view tag_invoke(streamlike::get_stream_t, const streamlike_only& s) noexcept { return s.handle; }
};

} // namespace

TEST_CASE("the build sees the CCCL it was configured with") {
  // Equal to what the build system read through the same include path.
  CHECK(CCCL_VERSION == STREAMLIKE_TEST_CCCL_VERSION);
  // The core's feature detection agrees with the version: cuda::get_stream and cuda::stream are 3.1+.
  CHECK(static_cast<bool>(STREAMLIKE_HAS_CUDA_GET_STREAM) == (CCCL_VERSION >= 3001000));
  CHECK(static_cast<bool>(STREAMLIKE_HAS_CUDA_STREAM) == (CCCL_VERSION >= 3001000));
  MESSAGE("CCCL_VERSION ", CCCL_VERSION);
}

TEST_CASE("cuda::stream_ref is stream_like, and a stream_view goes back to a stream_ref, with no CUDA call") {
  static_assert(streamlike::nothrow_stream_like<cuda::stream_ref>);
  static_assert(streamlike::nothrow_stream_like<const cuda::stream_ref&>);
  const cuda::stream_ref ref{fake_handle(0x1000)};
  const stream_view view = streamlike::get_stream(ref);
  CHECK(view.get() == fake_handle(0x1000));
  const cuda::stream_ref back = view; // implicit, as into any API that takes a stream_ref
  CHECK(back == ref);
}

TEST_CASE("a type written for cuda::get_stream works in streamlike unchanged") {
  const has_get_stream_member a{fake_handle(0x2000)};
  const has_stream_member b{fake_handle(0x3000)};
  static_assert(streamlike::nothrow_stream_like<const has_get_stream_member&>);
  static_assert(streamlike::nothrow_stream_like<const has_stream_member&>);
  CHECK(streamlike::get_stream(a) == fake_handle(0x2000));
  CHECK(streamlike::get_stream(b) == fake_handle(0x3000));
#if STREAMLIKE_HAS_CUDA_GET_STREAM
  const has_query_member c{fake_handle(0x4000)};
  static_assert(streamlike::nothrow_stream_like<const has_query_member&>);
  CHECK(streamlike::get_stream(c) == fake_handle(0x4000));
  // ... and both CPOs agree on every one of them.
  CHECK(cuda::get_stream(a) == streamlike::get_stream(a));
  CHECK(cuda::get_stream(b) == streamlike::get_stream(b));
  CHECK(cuda::get_stream(c) == streamlike::get_stream(c));
#endif
}

TEST_CASE("stream_ref_of gives CCCL a stream_ref for any stream_like") {
  const streamlike_only only{fake_handle(0x5000)};
  static_assert(std::same_as<decltype(cccl::stream_ref_of(only)), cuda::stream_ref>);
  static_assert(noexcept(cccl::stream_ref_of(only))); // as noexcept as the route it takes
  CHECK(cccl::stream_ref_of(only).get() == fake_handle(0x5000));
  CHECK(cccl::stream_ref_of(stream_view::legacy_default()).get() == cudaStreamLegacy);
#if STREAMLIKE_HAS_CUDA_GET_STREAM
  // A stream_ref is itself an environment: cuda::get_stream takes it where it did not take `only`.
  CHECK(cuda::get_stream(cccl::stream_ref_of(only)).get() == fake_handle(0x5000));
#endif
}

#if STREAMLIKE_HAS_CUDA_GET_STREAM

TEST_CASE("CCCL environments carrying a stream are stream_like (3.1+)") {
  const auto prop = cuda::std::execution::prop{cuda::get_stream, cuda::stream_ref{fake_handle(0x6000)}};
  const cuda::std::execution::env env{prop};
  CHECK(streamlike::get_stream(prop) == fake_handle(0x6000));
  CHECK(streamlike::get_stream(env) == fake_handle(0x6000));
}

TEST_CASE("streamlike's types work in cuda::get_stream (3.1+)") {
  const stream_view view{fake_handle(0x7000)};
  CHECK(cuda::get_stream(view).get() == fake_handle(0x7000));

  auto owner = streamlike::unique_stream::adopt(fake_handle(0x7100)); // adopt makes no CUDA call
  CHECK(cuda::get_stream(owner).get() == fake_handle(0x7100));
  static_cast<void>(owner.release()); // not a real stream: nothing to destroy

  const auto shared = streamlike::shared_stream::legacy_default(); // immortal: no CUDA call
  CHECK(cuda::get_stream(shared).get() == cudaStreamLegacy);

  // What docs/adapters.md warns about: CCCL takes its argument by const&, so it cannot refuse a
  // temporary owner, whose view would dangle; streamlike::get_stream does refuse it.
  static_assert(std::is_invocable_v<const cuda::get_stream_t&, streamlike::unique_stream>);
  static_assert(!streamlike::stream_like<streamlike::unique_stream>);
}

// Why the owners have no query(cuda::get_stream_t) (docs/owners.md): with CCCL 3.6, a
// type with both a get_stream() member and that query is an ambiguous call in cuda::get_stream.
// If this starts to hold, CCCL has lifted the ambiguity and the owners can gain the query.
struct get_stream_and_query {
  cuda::stream_ref get_stream() const noexcept { return cuda::stream_ref{fake_handle(0x7200)}; }
  cuda::stream_ref query(const cuda::get_stream_t&) const noexcept { return get_stream(); }
};
template <class T>
concept answers_get_stream_query = requires(const T& t) {
  t.query(cuda::get_stream);
};
static_assert(answers_get_stream_query<get_stream_and_query>);
static_assert(!answers_get_stream_query<streamlike::unique_stream>);
static_assert(!answers_get_stream_query<streamlike::shared_stream>);
#  if CCCL_MAJOR_VERSION == 3 && CCCL_MINOR_VERSION == 6
static_assert(!std::is_invocable_v<const cuda::get_stream_t&, const get_stream_and_query&>,
              "CCCL's cuda::get_stream now accepts get_stream() beside query(get_stream_t): revisit "
              "the owners' missing query member");
#  endif

TEST_CASE("an owner joins a CCCL environment through its cuda::stream_ref (3.1+)") {
  auto owner = streamlike::unique_stream::adopt(fake_handle(0x7300)); // adopt makes no CUDA call
  struct another_query {};
  const cuda::std::execution::env env{cuda::stream_ref{owner}, cuda::std::execution::prop{another_query{}, 1}};
  CHECK(cuda::get_stream(env).get() == fake_handle(0x7300));
  CHECK(streamlike::get_stream(env) == fake_handle(0x7300));
  static_cast<void>(owner.release()); // not a real stream: nothing to destroy
}

TEST_CASE("cuda::stream is a stream_owner: views of lvalues, export of rvalues (3.1+)") {
  static_assert(streamlike::stream_owner<cuda::stream>);
  static_assert(streamlike::nothrow_stream_like<cuda::stream&>);
  static_assert(streamlike::stream_like<const cuda::stream&>);
  // A temporary owner's view would dangle.
  static_assert(!streamlike::stream_like<cuda::stream>);
  static_assert(!streamlike::stream_like<cuda::stream&&>);
  // Exported by moving it in; an lvalue must be moved explicitly.
  static_assert(streamlike::stream_exporter<cuda::stream>);
  static_assert(!streamlike::stream_exporter<cuda::stream&>);

  auto owner = cuda::stream::from_native_handle(fake_handle(0x8000)); // takes the handle, no CUDA call
  CHECK(streamlike::get_stream(owner) == fake_handle(0x8000));
  static_cast<void>(owner.release()); // not a real stream: nothing to destroy
}

TEST_CASE("to_unique_stream and to_cuda_stream move ownership, with no CUDA call (3.1+)") {
  auto from_cccl = cuda::stream::from_native_handle(fake_handle(0x9000));
  auto unique = cccl::to_unique_stream(std::move(from_cccl));
  CHECK(unique.get() == fake_handle(0x9000));
  CHECK(from_cccl.get() != fake_handle(0x9000)); // given up: its destructor destroys nothing

  auto back = cccl::to_cuda_stream(std::move(unique));
  CHECK_FALSE(unique);
  CHECK(back.get() == fake_handle(0x9000));
  static_cast<void>(back.release());
}

TEST_CASE("to_unique_stream refuses a moved-from cuda::stream and a default stream") {
  auto owner = cuda::stream::from_native_handle(fake_handle(0xa000));
  auto taken = std::move(owner);
  CHECK_THROWS_AS(static_cast<void>(cccl::to_unique_stream(std::move(owner))), std::invalid_argument);
  static_cast<void>(taken.release());

  // unique_stream cannot own a default stream; the cuda::stream keeps it then.
  auto legacy = cuda::stream::from_native_handle(cudaStreamLegacy);
  CHECK_THROWS_AS(static_cast<void>(cccl::to_unique_stream(std::move(legacy))), std::invalid_argument);
  CHECK(legacy.get() == cudaStreamLegacy);
  static_cast<void>(legacy.release());
}

TEST_CASE("to_cuda_stream refuses an empty unique_stream") {
  streamlike::unique_stream empty;
  CHECK_THROWS_AS(static_cast<void>(cccl::to_cuda_stream(std::move(empty))), streamlike::error);
}

TEST_SUITE("gpu") {
  TEST_CASE("export_stream moves a real cuda::stream into a shared_stream that keeps it alive (3.1+)") {
    cuda::stream owner{cuda::device_ref{0}};
    const cudaStream_t handle = owner.get();
    streamlike::shared_stream shared = streamlike::export_stream(std::move(owner));
    CHECK(owner.get() != handle); // moved from
    CHECK(shared.get() == handle);
    CHECK(shared.device() == 0);
    CHECK(shared.view().is_done()); // a live stream: the query succeeds
    // A copy of the shared_stream, not the cuda::stream, is what keeps it alive now.
    auto copy = shared;
    shared.reset();
    CHECK(copy.view().is_done());
  }

  TEST_CASE("a stream made by streamlike becomes a cuda::stream and back, and stays usable (3.1+)") {
    auto made = streamlike::unique_stream::create();
    const cudaStream_t handle = made.get();
    cuda::stream as_cccl = cccl::to_cuda_stream(std::move(made));
    as_cccl.sync(); // CCCL can use it
    auto again = cccl::to_unique_stream(std::move(as_cccl));
    CHECK(again.get() == handle);
    CHECK(again.view().is_done());
  }
}

#endif // STREAMLIKE_HAS_CUDA_GET_STREAM
