// Shared helpers of the host suite: checks on exception messages, the check that a call made
// without a GPU fails the documented way, and fake stream handles. Header-only (inline): each
// host program is one source file and links nothing beyond the doctest main.
#ifndef STREAMLIKE_TEST_HOST_SUPPORT_HPP
#define STREAMLIKE_TEST_HOST_SUPPORT_HPP

#include <streamlike/error.hpp>

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace host_test {

// Messages are checked for the words they must name (the call, the CUDA error), not compared
// whole, so rewording the rest of a message does not break the tests.
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The exception `f` throws, if it is an `Exception`; empty if it throws nothing (anything else
// propagates and fails the test case). Lets a test check what() and code(), not only the type.
template <class Exception, class F>
std::optional<Exception> thrown(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const Exception& e) {
    return e;
  }
  return std::nullopt;
}

// True where a CUDA device is usable: the no-device checks do not apply there, and the tests
// that make them return early. Clears the error a failed query leaves behind.
inline bool device_present() {
  int count = 0;
  const bool present = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  (void)cudaGetLastError();
  return present;
}

// The no-device contract: a call that reaches the CUDA runtime without a device throws
// streamlike::error whose message names `call` (the operation or CUDA function that failed) and
// whose code is the missing driver or device, named in the message too.
inline void check_no_device_error(const std::optional<streamlike::error>& e, const char* call) {
  REQUIRE_MESSAGE(e.has_value(), "expected streamlike::error from " << call);
  const std::string what = e->what();
  CHECK_MESSAGE(contains(what, call), what);
  CHECK_MESSAGE(((e->code() == cudaErrorInsufficientDriver && contains(what, "cudaErrorInsufficientDriver")) ||
                 (e->code() == cudaErrorNoDevice && contains(what, "cudaErrorNoDevice"))),
                what);
}

// What the owners (shared_stream, unique_stream) must refuse to compile, as concepts their host
// programs static_assert false. The literal 0 is a null pointer constant, which converts to
// cudaEvent_t; the compile-fail case owner_wait_on_zero checks that the deleted wait(Integer) is
// what refuses it.
template <class Owner>
concept owner_waits_on_literal_zero = requires(const Owner& owner) {
  owner.wait(0);
};
template <class Owner>
concept owner_waits_on_nullptr = requires(const Owner& owner) {
  owner.wait(nullptr);
};
// The member route serves lvalues only: CCCL's cuda::get_stream calls it on whatever it is given.
template <class Owner>
concept member_get_stream_on_rvalue = requires(Owner owner) {
  std::move(owner).get_stream();
};
template <class Owner>
concept member_get_stream_on_const_rvalue = requires(const Owner owner) {
  std::move(owner).get_stream();
};

// A fake stream handle: a distinct address, never dereferenced, so tests of views and routes
// need no GPU. Anything given one must not reach a real driver (the no-device tests skip where a
// device is present).
inline cudaStream_t fake_handle(std::uintptr_t address) {
  return reinterpret_cast<cudaStream_t>(address); // NOLINT(performance-no-int-to-ptr)
}

} // namespace host_test

#endif // STREAMLIKE_TEST_HOST_SUPPORT_HPP
