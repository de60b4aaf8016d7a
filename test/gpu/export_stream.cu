// streamlike/export_stream.hpp on a device: exporting moves the owner in (no new stream is made)
// or holds a keep-alive object, and the stream is destroyed exactly once, when the last
// shared_stream drops (counted by interposing cudaStreamCreate*/cudaStreamDestroy); the default
// streams are never destroyed; work runs on every exported stream.
#include "call_counters.hpp"
#include "gpu_support.hpp"
#include "ownership_checks.hpp"
#include "timed_kernels.hpp"

#include <streamlike/export_stream.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <memory>
#include <utility>

namespace {
using streamlike::shared_stream;
using streamlike::unique_stream;
} // namespace

TEST_CASE("lifecycle: export_stream(std::move(unique_stream)), 100,000 times; no stream is created by the export") {
  // creates == n proves the export made no stream of its own (one creation per unique_stream).
  gpu_test::check_lifecycle("export_stream(std::move(unique_stream))", gpu_test::lifecycle_streams(), [](long) {
    unique_stream u = unique_stream::create();
    const cudaStream_t handle = u.get();
    const shared_stream s = streamlike::export_stream(std::move(u));
    const shared_stream copy = s;
    return !u && s.get() == handle && s.use_count() == 2 && call_counters::is_live(handle);
  });
}

TEST_CASE("lifecycle: keep_alive of a std::shared_ptr<unique_stream>, 100,000 times") {
  gpu_test::check_lifecycle("export_stream(std::shared_ptr<unique_stream>)", gpu_test::lifecycle_streams(), [](long) {
    auto owner = std::make_shared<unique_stream>(unique_stream::create());
    const cudaStream_t handle = owner->get();
    shared_stream s = streamlike::export_stream(owner); // holds a copy of the shared_ptr
    const bool held = owner.use_count() == 2;
    owner.reset(); // the caller's reference goes: the shared_stream keeps the stream alive
    const bool alive_after_owner = call_counters::is_live(handle);
    const shared_stream last = s;
    s.reset();
    const bool alive_after_first = call_counters::is_live(handle); // `last` still holds it
    return held && alive_after_owner && alive_after_first && last.get() == handle;
  });
}

TEST_CASE("work runs on exported streams, and they keep their facts") {
  SUBCASE("a moved-in unique_stream") {
    unique_stream u = unique_stream::create({.non_blocking = false});
    const cudaStream_t handle = u.get();
    const shared_stream s = streamlike::export_stream(std::move(u));
    CHECK(s.get() == handle);
    CHECK(s.flags() == cudaStreamDefault); // cached from the stream it took in
    CHECK(s.id() == gpu_test::stream_id(handle));
    gpu_test::check_work_runs_on(streamlike::get_stream(s));
  }
  SUBCASE("a std::shared_ptr<unique_stream>") {
    auto owner = std::make_shared<unique_stream>(unique_stream::create());
    const shared_stream s = streamlike::export_stream(std::move(owner));
    CHECK(s.flags() == cudaStreamNonBlocking);
    gpu_test::check_work_runs_on(streamlike::get_stream(s));
  }
  SUBCASE("a shared_stream: copied, the count goes up by one, no stream is made") {
    const shared_stream original = shared_stream::create();
    const call_counters::counts before = call_counters::now();
    const shared_stream exported = streamlike::export_stream(original);
    CHECK(exported == original);
    CHECK(original.use_count() == 2);
    CHECK(call_counters::since(before, call_counters::now()).stream_creates == 0);
    gpu_test::check_work_runs_on(streamlike::get_stream(exported));
  }
}

TEST_CASE("the default streams are immortal: dropping their shared_streams destroys nothing") {
  const call_counters::counts before = call_counters::now();
  {
    const shared_stream legacy = shared_stream::legacy_default();
    const shared_stream per_thread = shared_stream::per_thread_default();
    CHECK(legacy.get() == cudaStreamLegacy);
    CHECK(per_thread.get() == cudaStreamPerThread);
    gpu_test::check_work_runs_on(streamlike::get_stream(legacy));
    gpu_test::check_work_runs_on(streamlike::get_stream(per_thread));
  }
  const call_counters::counts d = call_counters::since(before, call_counters::now());
  CHECK_MESSAGE(d.stream_destroys + d.destroys_not_live == 0,
                "a default stream was passed to cudaStreamDestroy: " << d);
  CHECK(d.stream_creates == 0);
}
