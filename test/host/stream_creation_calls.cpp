// Every CUDA call that creating and dropping an owned stream makes, pinned without a GPU: the
// program carries the fake CUDA of test/fake_cuda (fake_cuda.h), exported so that
// libstreamlike's calls reach it, and the fake counts each call by name. A raw create + destroy is
// two calls; an owner may add only what is listed here, and each addition says what it buys
// (bench/RESULTS.md, "Stream creation"). A new call on these paths fails this test: it costs time on
// every create (bench/stream_pool.cu, the create/ rows), so it must be chosen, not slipped in.
#include "../fake_cuda/fake_cuda.h"
#include "fake_cuda_support.hpp"

#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_pool.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <functional>
#include <map>
#include <sstream>
#include <string>

namespace {

using streamlike::shared_stream;
using streamlike::unique_stream;

using host_test::calls;
using host_test::calls_of; // its first run makes what is made once

std::string text(const calls& c) {
  std::ostringstream out;
  long total = 0;
  for (const auto& [name, count] : c) {
    out << "  " << name << " x" << count << "\n";
    total += count;
  }
  out << "  (" << total << " calls)";
  return out.str();
}

void check_calls(const calls& made, const calls& expected) {
  CHECK_MESSAGE(made == expected, "made:\n", text(made), "\nexpected:\n", text(expected));
}

// What the raw way makes, for reference: one create, one destroy.
const calls raw = {{"cudaStreamCreateWithPriority", 1}, {"cudaStreamDestroy", 1}};

} // namespace

TEST_CASE("this program's CUDA is the fake, and a raw create + destroy is two calls") {
  REQUIRE(fake_cuda_present() == 1);
  check_calls(calls_of([] {
                cudaStream_t s = nullptr;
                REQUIRE(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, 0) == cudaSuccess);
                REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
              }),
              raw);
}

TEST_CASE("shared_stream::create() + drop: the driver's create and destroy, the id, the current context") {
  const long live = fake_cuda_live_streams();
  check_calls(calls_of([] { const shared_stream s = shared_stream::create(); }),
              {
                  // the current context (its device and primary-ness remembered for its id), in
                  // place of cudaGetDevice; at the drop, that primary context's id is still the
                  // stream's (cudaDeviceReset has not ended it)
                  {"cuCtxGetCurrent", 1},
                  {"cuCtxGetId", 2},
                  {"cuStreamCreateWithPriority", 1},
                  {"cuStreamGetId", 1}, // the id a capture may not ask for later
                  {"cuStreamDestroy", 1},
              });
  CHECK(fake_cuda_live_streams() == live);
}

TEST_CASE("shared_stream::create with every option + drop: the same, plus the named device's guard") {
  check_calls(calls_of([] {
                const shared_stream s = shared_stream::create({.device = 0, .priority = -1, .non_blocking = false});
              }),
              {
                  {"cudaGetDevice", 1}, // the device guard, which switches nothing here
                  {"cuCtxGetCurrent", 1},
                  {"cuCtxGetId", 2},
                  {"cuStreamCreateWithPriority", 1},
                  {"cuStreamGetId", 1},
                  {"cuStreamDestroy", 1},
              });
}

TEST_CASE("unique_stream::create() + drop: the driver's create and destroy, the current context") {
  const long live = fake_cuda_live_streams();
  check_calls(calls_of([] { const unique_stream u = unique_stream::create(); }),
              {
                  {"cuCtxGetCurrent", 2}, // at create, the device; at the drop, that the stream's
                  {"cuCtxGetId", 1},      // context is current
                  {"cuStreamCreateWithPriority", 1},
                  {"cuStreamGetCtx", 1},
                  {"cuStreamDestroy", 1},
              });
  CHECK(fake_cuda_live_streams() == live);
}

TEST_CASE("a shared_stream dropped where another device is current: its primary context asked, no device switch") {
  fake_cuda_set_devices(2);
  const long live = fake_cuda_live_streams();
  check_calls(calls_of([] {
                shared_stream s = shared_stream::create();
                REQUIRE(cudaSetDevice(1) == cudaSuccess);
                s.reset();
                REQUIRE(cudaSetDevice(0) == cudaSuccess);
              }),
              {
                  {"cuCtxGetCurrent", 1},
                  // at create, the current context's id; at the drop, the id of the primary
                  // context the stream was made in, asked whichever context is current
                  {"cuCtxGetId", 2},
                  {"cuStreamCreateWithPriority", 1},
                  {"cuStreamGetId", 1},
                  {"cuStreamDestroy", 1},
                  {"cudaSetDevice", 2}, // the test's two
              });
  CHECK(fake_cuda_live_streams() == live);
  fake_cuda_set_devices(1);
}

TEST_CASE("stream_pool::get + drop makes no CUDA call") {
  streamlike::stream_pool pool(2);
  check_calls(calls_of([&] { const shared_stream s = pool.get(); }), {});
}

TEST_CASE("an adopted shared_stream dropped where another device is current: the liveness check and the guard") {
  fake_cuda_set_devices(2);
  const long live = fake_cuda_live_streams();
  check_calls(calls_of([] {
                cudaStream_t raw = nullptr;
                REQUIRE(cudaStreamCreateWithPriority(&raw, cudaStreamNonBlocking, 0) == cudaSuccess);
                shared_stream s = shared_stream::adopt(raw);
                fake_cuda_reset_log(); // the drop's calls only
                REQUIRE(cudaSetDevice(1) == cudaSuccess);
                s.reset();
                REQUIRE(cudaSetDevice(0) == cudaSuccess);
              }),
              {
                  // whether the stream's context is current: it is not
                  {"cuCtxGetCurrent", 1},
                  {"cuCtxGetId", 2},
                  // the primary context of the stream's device, asked without the stream's context
                  // current: still the one it was adopted in?
                  {"cuDevicePrimaryCtxGetState", 1},
                  {"cuDevicePrimaryCtxRetain", 1},
                  {"cuDevicePrimaryCtxRelease", 1},
                  // the runtime's destroy, on the stream's device
                  {"cudaGetDevice", 1},
                  {"cudaSetDevice", 4}, // the test's two, the guard's switch and its restore
                  {"cudaStreamDestroy", 1},
              });
  CHECK(fake_cuda_live_streams() == live);
  fake_cuda_set_devices(1);
}

TEST_CASE("a refused driver destroy falls through to the runtime's destroy on the stream's device") {
  // Each owner's drop path that tries cuStreamDestroy first: a refusal must not count as done (the
  // stream would leak unseen); the runtime's destroy, with the stream's device current, follows.
  fake_cuda_set_devices(2);
  const std::function<void()> drops[] = {
      [] { const shared_stream s = shared_stream::create(); }, // the primary context's id, then the destroy
      [] {
        shared_stream s = shared_stream::create(); // dropped where another device is current
        REQUIRE(cudaSetDevice(1) == cudaSuccess);
        s.reset();
        REQUIRE(cudaSetDevice(0) == cudaSuccess);
      },
      [] { const unique_stream u = unique_stream::create(); }, // the stream's context current
  };
  for (const auto& drop : drops) {
    const long live = fake_cuda_live_streams();
    fake_cuda_reset_log();
    REQUIRE(fake_cuda_fail_next("cuStreamDestroy", cudaErrorInvalidValue) == 0);
    drop();
    CHECK(fake_cuda_calls("cuStreamDestroy") == 1);
    CHECK(fake_cuda_calls("cudaStreamDestroy") == 1);
    CHECK(fake_cuda_live_streams() == live);
  }
  fake_cuda_set_devices(1);
}
