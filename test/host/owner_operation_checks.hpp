// The checks of what shared_stream and unique_stream share without a GPU, one body for both owners
// (run by shared_stream.cpp and unique_stream.cpp, as test/gpu/owner_operation_checks.hpp runs the
// same operations on real streams): the operations they share with stream_view (is_done, sync,
// wait, record), their errors on an empty owner and without a device, their conversions to the view
// types, and what they refuse to compile. Header-only.
#ifndef STREAMLIKE_TEST_HOST_OWNER_OPERATION_CHECKS_HPP
#define STREAMLIKE_TEST_HOST_OWNER_OPERATION_CHECKS_HPP

#include <streamlike/event.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_view.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace host_test {

// Whether `owner.wait(argument)` compiles (a dependent expression, so a refusal is an answer).
template <class Owner, class Argument>
concept can_wait = requires(const Owner& owner, Argument&& argument) {
  owner.wait(std::forward<Argument>(argument));
};

// The operations' signatures, noexcept and what wait accepts; `Other` is the other owner, whose
// lvalue is a producer too.
template <class Owner, class Other>
void check_operation_signatures() {
  using streamlike::stream_view;
  static_assert(requires(const Owner& o) {
    { o.is_done() } -> std::same_as<bool>;
    { o.record() } -> std::same_as<streamlike::event>;
    { o.record(streamlike::event_options{.timing = true}) } -> std::same_as<streamlike::event>;
  });
  // Each may fail (an empty owner, a CUDA error), so none is noexcept.
  static_assert(requires(const Owner& o) {
    requires !noexcept(o.is_done());
    requires !noexcept(o.sync());
    requires !noexcept(o.wait(cudaEvent_t{}));
    requires !noexcept(o.wait(stream_view::legacy_default()));
    requires !noexcept(o.record());
  });
  // wait takes an event or any stream_like producer, as an lvalue where the producer owns it.
  static_assert(
      requires(const Owner& o, cudaEvent_t e, stream_view v, cudaStream_t h, cuda::stream_ref r, Other& other) {
        o.wait(e);
        o.wait(v);
        o.wait(h);
        o.wait(r);
        o.wait(o);
        o.wait(other);
      });
  static_assert(!can_wait<Owner, Owner>); // a temporary owner's view would dangle
  // Neither 0, an integer, nor nullptr is an event or a stream (as stream_view::wait).
  static_assert(!can_wait<Owner, int>);
  static_assert(!can_wait<Owner, long>);
  static_assert(!can_wait<Owner, unsigned>);
  static_assert(!can_wait<Owner, std::nullptr_t>);
  static_assert(!can_wait<Owner, void*>);
  // Adding the operations changed no route: get_stream still takes the member get_stream().
  static_assert(streamlike::stream_like<const Owner&>);
  static_assert(!streamlike::nothrow_stream_like<const Owner&>);
}

// `e` is the error of an empty owner called `name` ("shared_stream"): it names `operation`.
inline void check_empty_error(const std::optional<streamlike::error>& e, const std::string& operation,
                              const std::string& name) {
  REQUIRE_MESSAGE(e.has_value(), operation << " did not throw streamlike::error");
  const std::string what = e->what();
  CHECK_MESSAGE(contains(what, operation), what);
  CHECK_MESSAGE(contains(what, "the " + name + " is empty"), what);
  CHECK(e->code() == cudaErrorInvalidResourceHandle);
}

// Every operation of the empty owner `o` throws the empty error naming the operation.
template <class Owner>
void check_empty_operations(const Owner& o, const std::string& name) {
  using streamlike::stream_view;
  check_empty_error(thrown<streamlike::error>([&] { (void)o.is_done(); }), name + "::is_done", name);
  check_empty_error(thrown<streamlike::error>([&] { o.sync(); }), name + "::sync", name);
  check_empty_error(thrown<streamlike::error>([&] { o.wait(cudaEvent_t{}); }), name + "::wait", name);
  check_empty_error(thrown<streamlike::error>([&] { o.wait(stream_view::legacy_default()); }), name + "::wait", name);
  check_empty_error(thrown<streamlike::error>([&] { (void)o.record(); }), name + "::record", name);
}

// Without a device, each operation of `o` (which views a stream it caches no device of) names the
// owner's operation and the CUDA call.
template <class Owner>
void check_operations_without_device(const Owner& o, const std::string& name) {
  check_no_device_error(thrown<streamlike::error>([&] { (void)o.is_done(); }),
                        (name + "::is_done: cudaStreamQuery").c_str());
  check_no_device_error(thrown<streamlike::error>([&] { o.sync(); }), (name + "::sync: cudaStreamSynchronize").c_str());
  check_no_device_error(thrown<streamlike::error>([&] { o.wait(streamlike::stream_view::legacy_default()); }),
                        (name + "::wait: cudaStreamGetDevice").c_str());
  // No device cached: record asks the stream for it.
  check_no_device_error(thrown<streamlike::error>([&] { (void)o.record(); }),
                        (name + "::record: cudaStreamGetDevice").c_str());
}

// The conversions to the view types: on lvalues only, to cudaStream_t only explicitly.
template <class Owner>
void check_view_conversions() {
  using streamlike::stream_view;
  static_assert(std::is_convertible_v<Owner&, cuda::stream_ref>);
  static_assert(std::is_convertible_v<const Owner&, cuda::stream_ref>);
  static_assert(std::is_convertible_v<Owner&, stream_view>);
  static_assert(std::is_convertible_v<const Owner&, stream_view>);
  // A temporary may hold the last reference to its stream: its view would dangle.
  static_assert(!std::is_convertible_v<Owner, cuda::stream_ref>);
  // A const temporary too (were the const&& overloads missing, it would bind to the const& ones).
  static_assert(!std::is_convertible_v<const Owner, cuda::stream_ref>);
  static_assert(!std::is_convertible_v<const Owner&&, cuda::stream_ref>);
  static_assert(!std::is_constructible_v<cuda::stream_ref, const Owner&&>);
  static_assert(!std::is_convertible_v<const Owner&&, stream_view>);
  static_assert(!std::is_constructible_v<cudaStream_t, const Owner&&>);
  static_assert(!std::is_convertible_v<Owner&&, stream_view>);
  static_assert(!std::is_convertible_v<const Owner, stream_view>);
  // The raw handle: explicit, and lvalues only.
  static_assert(!std::is_convertible_v<const Owner&, cudaStream_t>);
  static_assert(std::is_constructible_v<cudaStream_t, const Owner&>);
  static_assert(!std::is_constructible_v<cudaStream_t, Owner>);
  static_assert(!std::is_convertible_v<const Owner&, void*>);
  static_assert(!std::is_convertible_v<const Owner&, bool>); // operator bool stays explicit
  // Each may throw (an empty owner), so none is noexcept.
  static_assert(!std::is_nothrow_convertible_v<const Owner&, stream_view>);
  static_assert(!std::is_nothrow_convertible_v<const Owner&, cuda::stream_ref>);
  // get_stream still views lvalues only, never noexcept, and gives the same view.
  static_assert(streamlike::stream_like<const Owner&>);
  static_assert(streamlike::stream_like<Owner&>);
  static_assert(!streamlike::stream_like<Owner>);
  static_assert(!streamlike::nothrow_stream_like<Owner&>);
}

// `o` views `handle` (not the legacy default stream): each conversion gives it, and `o` compares
// equal to views of it, either way round.
template <class Owner>
void check_converts_to(const Owner& o, cudaStream_t handle) {
  using streamlike::stream_view;
  const stream_view view = o;
  const cuda::stream_ref ref = o;
  CHECK(view == stream_view{handle});
  CHECK(ref.get() == handle);
  CHECK(static_cast<cudaStream_t>(o) == handle);
  CHECK(stream_view{o} == o.view());
  CHECK(cuda::stream_ref{o}.get() == o.get());
  CHECK(streamlike::get_stream(o) == o.view());
  CHECK(o == view);
  CHECK(view == o);
  CHECK(o == handle);
  CHECK(o != stream_view::legacy_default());
  CHECK(stream_view::legacy_default() != o);
  const auto takes_view = [](stream_view v) { return v.get(); };
  const auto takes_ref = [](cuda::stream_ref r) { return r.get(); };
  CHECK(takes_view(o) == handle);
  CHECK(takes_ref(o) == handle);
}

// Converting the empty owner `empty` throws the empty error of view(); it equals no handle.
template <class Owner>
void check_empty_conversions(const Owner& empty, const std::string& name) {
  for (const auto& e : {thrown<streamlike::error>([&] { (void)static_cast<streamlike::stream_view>(empty); }),
                        thrown<streamlike::error>([&] { (void)static_cast<cuda::stream_ref>(empty); }),
                        thrown<streamlike::error>([&] { (void)static_cast<cudaStream_t>(empty); })}) {
    REQUIRE(e.has_value());
    const std::string what = e->what();
    CHECK_MESSAGE(contains(what, "the " + name + " is empty"), what);
  }
  CHECK(empty != streamlike::stream_view{cudaStream_t{}}); // empty views nothing, not the handle 0
  CHECK(empty != cudaStream_t{});
}

// wait refuses 0 and nullptr; the member get_stream() refuses rvalues.
template <class Owner>
void check_compile_refusals() {
  static_assert(!owner_waits_on_literal_zero<Owner>, "o.wait(0) must not compile");
  static_assert(!owner_waits_on_nullptr<Owner>, "o.wait(nullptr) must not compile");
  static_assert(!member_get_stream_on_rvalue<Owner>, "std::move(o).get_stream() must not compile");
  static_assert(!member_get_stream_on_const_rvalue<Owner>);
  static_assert(requires(const Owner& o) { o.get_stream(); });
}

} // namespace host_test

#endif
