// Every CUDA call that streamlike::wait(consumer, producer) makes on its eager path, pinned without
// a GPU against the fake CUDA of test/fake_cuda (fake_cuda.h), which counts calls by name.
// The floor is the driver's record and wait (cuEventRecord + cuStreamWaitEvent); wait adds the
// consumer's capture status (what keeps a capture valid) and, unless the producer is an owner that
// knows its context, the producer's context (to find this thread's cached event). A new call here
// costs time on every wait (bench/ordering.cu, judged against the driver's floor).
#include "../fake_cuda/fake_cuda.h"
#include "fake_cuda_support.hpp"

#include <streamlike/ordering.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <sstream>
#include <string>

namespace {

using host_test::calls;
using host_test::calls_of; // its first run makes what is made once

std::string text(const calls& c) {
  std::ostringstream out;
  for (const auto& [name, count] : c) out << "  " << name << " x" << count << "\n";
  return out.str();
}

void check_calls(const calls& made, const calls& expected) {
  CHECK_MESSAGE(made == expected, "made:\n", text(made), "expected:\n", text(expected));
}

const calls floor_and_check = {
    {"cuStreamIsCapturing", 1}, // the consumer: a capturing one may wait only within its capture
    {"cuEventRecord", 1},
    {"cuStreamWaitEvent", 1},
};

calls plus_context_lookup() {
  calls c = floor_and_check;
  c["cuStreamGetCtx"] = 1; // the producer's context, whose cached event is recorded
  c["cuCtxGetId"] = 1;
  return c;
}

} // namespace

TEST_CASE("this program's CUDA is the fake") { REQUIRE(fake_cuda_present() == 1); }

TEST_CASE("wait(shared_stream, shared_stream): the floor and the capture check, no context lookup") {
  const streamlike::shared_stream consumer = streamlike::shared_stream::create();
  const streamlike::shared_stream producer = streamlike::shared_stream::create();
  check_calls(calls_of([&] { streamlike::wait(consumer, producer); }), floor_and_check);
  // The consumer's member, and a view consumer, take the same path.
  check_calls(calls_of([&] { consumer.wait(producer); }), floor_and_check);
  check_calls(calls_of([&] { streamlike::wait(consumer.view(), producer); }), floor_and_check);
}

TEST_CASE("wait with a producer that does not know its context: the context asked") {
  const streamlike::shared_stream consumer = streamlike::shared_stream::create();
  const streamlike::unique_stream producer = streamlike::unique_stream::create();
  check_calls(calls_of([&] { streamlike::wait(consumer, producer); }), plus_context_lookup());
  check_calls(calls_of([&] { streamlike::wait(consumer.get(), producer.get()); }), plus_context_lookup());
  // A default stream's shared_stream caches no facts: asked too.
  const streamlike::shared_stream legacy = streamlike::shared_stream::legacy_default();
  check_calls(calls_of([&] { streamlike::wait(consumer, legacy); }), plus_context_lookup());
}

TEST_CASE("wait of a stream on itself makes no call") {
  const streamlike::shared_stream s = streamlike::shared_stream::create();
  check_calls(calls_of([&] { streamlike::wait(s, s); }), {});
}
