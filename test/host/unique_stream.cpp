// Tests for streamlike/unique_stream.hpp that need no GPU: layout, move-only ownership, the empty
// state, release(), the refusal to own a default stream, create() without a device, and the
// concepts. A fake handle is adopted only where it is release()d before destruction, so the
// destructor never hands it to CUDA.
#include <streamlike/export_stream.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_exporter.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_owner.hpp>
#include <streamlike/unique_stream.hpp>

#include "host_support.hpp"
#include "owner_operation_checks.hpp"

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

using streamlike::stream_view;
using streamlike::unique_stream;
using host_test::contains;
using host_test::thrown;
using host_test::device_present;
using host_test::check_no_device_error;
// fake_handle: never a real stream and never a default one; must be release()d before its owner dies.
using host_test::fake_handle;

TEST_CASE("unique_stream is one pointer, move-only, with noexcept moves") {
  static_assert(sizeof(unique_stream) == sizeof(void*));
  static_assert(!std::is_copy_constructible_v<unique_stream>);
  static_assert(!std::is_copy_assignable_v<unique_stream>);
  static_assert(std::is_nothrow_move_constructible_v<unique_stream>);
  static_assert(std::is_nothrow_move_assignable_v<unique_stream>);
  static_assert(std::is_nothrow_default_constructible_v<unique_stream>);
  static_assert(std::is_nothrow_destructible_v<unique_stream>);
  static_assert(std::is_nothrow_swappable_v<unique_stream>);
  // Never made implicitly from a raw handle: ownership is taken with adopt().
  static_assert(!std::is_constructible_v<unique_stream, cudaStream_t>);
  unique_stream u;
  static_assert(noexcept(u.release()));
  static_assert(noexcept(static_cast<bool>(u)));
  static_assert(!noexcept(u.view())); // throws when empty
}

TEST_CASE("unique_stream concepts: the canonical stream_owner, stream_like only as an lvalue") {
  static_assert(streamlike::enable_stream_owner<unique_stream>);
  static_assert(streamlike::stream_owner<unique_stream>);
  static_assert(streamlike::stream_owner<unique_stream&>);
  static_assert(streamlike::stream_owner<const unique_stream&>);
  static_assert(streamlike::stream_like<unique_stream&>);
  static_assert(streamlike::stream_like<const unique_stream&>);
  // A view of a temporary owner would dangle.
  static_assert(!streamlike::stream_like<unique_stream>);
  static_assert(!streamlike::stream_like<unique_stream&&>);
  static_assert(!streamlike::stream_like<const unique_stream>);
  static_assert(!streamlike::nothrow_stream_like<unique_stream&>); // view() throws when empty
  // Exported by moving it in; an lvalue must be std::move'd explicitly.
  static_assert(streamlike::stream_exporter<unique_stream>);
  static_assert(streamlike::stream_exporter<unique_stream&&>);
  static_assert(!streamlike::stream_exporter<unique_stream&>);
  static_assert(!streamlike::stream_exporter<const unique_stream&>);
}

TEST_CASE("an empty unique_stream owns nothing and its view throws saying so") {
  unique_stream u;
  CHECK_FALSE(u);
  for (const auto& e :
       {thrown<streamlike::error>([&] { (void)u.view(); }), thrown<streamlike::error>([&] { (void)u.get(); }),
        thrown<streamlike::error>([&] { (void)streamlike::get_stream(u); })}) {
    REQUIRE(e.has_value());
    const std::string what = e->what();
    CHECK_MESSAGE(contains(what, "unique_stream"), what);
    CHECK_MESSAGE(contains(what, "empty"), what);
  }
  CHECK(u.release() == nullptr); // nothing to give up
  CHECK_FALSE(u);
}

TEST_CASE("adopt() owns the handle; release() gives it back and empties the unique_stream") {
  const cudaStream_t fake = fake_handle(0x1234);
  unique_stream u = unique_stream::adopt(fake); // adopt itself makes no CUDA call
  CHECK(u);
  CHECK(u.view() == fake);
  CHECK(u.get() == fake);
  CHECK(streamlike::get_stream(u) == fake);
  CHECK(streamlike::get_stream(std::as_const(u)) == fake);

  CHECK(u.release() == fake);
  CHECK_FALSE(u);
  CHECK_THROWS_AS((void)u.view(), streamlike::error);
  CHECK(u.release() == nullptr); // a second release has nothing left
}

TEST_CASE("moving a unique_stream transfers ownership and empties the source") {
  const cudaStream_t fake = fake_handle(0x1234);
  unique_stream a = unique_stream::adopt(fake);

  unique_stream b = std::move(a);
  CHECK_FALSE(a); // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
  CHECK(b.get() == fake);

  unique_stream c;
  c = std::move(b); // into an empty one: nothing to destroy
  CHECK_FALSE(b);   // NOLINT(bugprone-use-after-move)
  CHECK(c.get() == fake);

  unique_stream& alias = c;
  c = std::move(alias); // self-move keeps the stream
  CHECK(c.get() == fake);

  unique_stream d;
  c.swap(d);
  CHECK_FALSE(c);
  CHECK(d.get() == fake);
  using std::swap;
  swap(c, d); // the hidden friend, found by ADL
  CHECK(c.get() == fake);
  CHECK_FALSE(d);

  CHECK(c.release() == fake); // the fake handle must never reach the destructor
}

TEST_CASE("adopt() refuses the default streams with std::invalid_argument naming the problem") {
  for (const cudaStream_t handle : {cudaStream_t{}, cudaStreamLegacy, cudaStreamPerThread}) {
    const auto e = thrown<std::invalid_argument>([&] { (void)unique_stream::adopt(handle); });
    REQUIRE(e.has_value());
    const std::string what = e->what();
    CHECK_MESSAGE(contains(what, "unique_stream::adopt"), what);
    CHECK_MESSAGE(contains(what, "default stream"), what);
    CHECK_MESSAGE(contains(what, "cannot be owned"), what);
  }
}

TEST_CASE("create() without a device throws streamlike::error naming the operation and the CUDA error") {
  if (device_present()) {
    MESSAGE("a CUDA device is present: skipping the no-device checks");
    return;
  }
  for (const streamlike::stream_options& options :
       {streamlike::stream_options{}, streamlike::stream_options{.device = 0, .priority = -1}}) {
    check_no_device_error(thrown<streamlike::error>([&] { (void)unique_stream::create(options); }),
                          "unique_stream::create");
  }
}

// --- The stream's operations on the owner (owner_operation_checks.hpp: one body for both owners) --

TEST_CASE("unique_stream's operations: signatures, noexcept and what wait accepts") {
  host_test::check_operation_signatures<unique_stream, streamlike::shared_stream>();
}

TEST_CASE("unique_stream's operations on an empty unique_stream throw the empty error naming the operation") {
  host_test::check_empty_operations(unique_stream{}, "unique_stream");
  // Released: empty too.
  unique_stream released = unique_stream::adopt(fake_handle(0x1234));
  CHECK(released.release() == fake_handle(0x1234));
  host_test::check_empty_operations(released, "unique_stream");
}

TEST_CASE("unique_stream's operations without a device name the unique_stream's operation and the CUDA call") {
  if (device_present()) {
    // A fake handle must never reach a real driver.
    MESSAGE("a CUDA device is present: skipping the no-device checks");
    return;
  }
  unique_stream u = unique_stream::adopt(fake_handle(0x1234));
  host_test::check_operations_without_device(u, "unique_stream");
  CHECK(u.release() == fake_handle(0x1234)); // the fake handle must never reach the destructor
}

// --- Conversions to the view types -----------------------------------------------------------------

TEST_CASE(
    "unique_stream converts to stream_view and cuda::stream_ref on lvalues only, to cudaStream_t only explicitly") {
  host_test::check_view_conversions<unique_stream>();
  // Still the canonical stream_owner, and still exported by moving it in.
  static_assert(streamlike::stream_owner<unique_stream>);
  static_assert(streamlike::stream_exporter<unique_stream>);
  static_assert(!streamlike::stream_exporter<unique_stream&>);

  unique_stream u = unique_stream::adopt(fake_handle(0x1234));
  host_test::check_converts_to(u, fake_handle(0x1234));
  CHECK(u.release() == fake_handle(0x1234)); // the fake handle must never reach the destructor
  host_test::check_empty_conversions(unique_stream{}, "unique_stream");
}

TEST_CASE("unique_stream: wait refuses 0 and nullptr; the member get_stream() refuses rvalues") {
  host_test::check_compile_refusals<unique_stream>();
}
