// A program compiled with hidden visibility, as nanobind and pybind11 compile extension modules,
// using libstreamlike across the library boundary: exceptions thrown inside the library are
// caught here by their type (streamlike::error's typeinfo is one, exported by the library), and a
// shared_stream control block made here (keep_alive: a holding_block instantiated in this program)
// is read by the library's out-of-line queries and released through its vtable. Needs no GPU:
// without one the queries throw streamlike::error, with one they answer.
//
// Built by the symbols suite against this build's library, and by static_runtime_test.py against
// the library built with the C++ runtime linked in. Prints each failure; exit status 0 or 1.
#include <streamlike/error.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

namespace {

int failures = 0;

void fail(const char* check, const std::string& what) {
  std::printf("FAIL: %s: %s\n", check, what.c_str());
  ++failures;
}

enum class outcome { throws, may_throw };

// Runs `body`, which must throw streamlike::error (with `code`, unless it is cudaSuccess), or may
// also return normally; anything else is a failure named after `check`.
template <class Body>
void expect_streamlike_error(const char* check, outcome expected, cudaError_t code, Body body) {
  try {
    body();
    if (expected == outcome::throws) fail(check, "did not throw");
  } catch (const streamlike::error& e) {
    if (code != cudaSuccess && e.code() != code)
      fail(check, std::string("streamlike::error with another code: ") + cudaGetErrorName(e.code()));
    std::printf("caught streamlike::error: %s\n", e.what());
  } catch (const std::exception& e) {
    fail(check, std::string("caught as std::exception but not as streamlike::error (its typeinfo differs across "
                            "the library boundary; is it exported?): ") +
                    e.what());
  } catch (...) {
    fail(check, "threw something that is not a std::exception");
  }
}

} // namespace

int main() {
  // Thrown by the library's out-of-line throw_error.
  expect_streamlike_error("detail::throw_error", outcome::throws, cudaErrorNotReady,
                          [] { streamlike::detail::throw_error(cudaErrorNotReady, "cudaEventQuery"); });
  // Thrown by a library member on an empty owner.
  expect_streamlike_error("shared_stream{}.device()", outcome::throws, cudaSuccess,
                          [] { (void)streamlike::shared_stream{}.device(); });

  // A block made here, queried by the library (the default stream answers for the current device,
  // or throws streamlike::error without one), then released here through its vtable.
  auto held = std::make_shared<int>(42);
  auto kept = streamlike::shared_stream::keep_alive(streamlike::stream_view::legacy_default(), held);
  if (held.use_count() != 2) fail("keep_alive", "the block does not hold the object");
  expect_streamlike_error("keep_alive(...).device()", outcome::may_throw, cudaSuccess, [&] { (void)kept.device(); });
  kept.reset();
  if (held.use_count() != 1) fail("keep_alive", "dropping the last reference did not release the object");

  if (failures != 0) return 1;
  std::printf("ok\n");
  return 0;
}
