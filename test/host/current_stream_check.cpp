// The opt-in check that a stream given to streamlike is the current one, with a fake provider and
// a recording reporter: no GPU. The program carries the fake CUDA of test/fake_cuda: streams
// are its streams, except one handle it never made (a stream CUDA cannot ask about).
#include "fake_cuda_streams.hpp"
#include "host_support.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_check.hpp>
#include <streamlike/current_stream_providers.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using host_test::fake_handle;
using streamlike::stream_view;

constexpr int device = 0;

struct report {
  std::string site;
  stream_view given;
  stream_view current;
  std::string provider;
  int device;
};
std::vector<report> reports;

void record(const streamlike::current_stream_mismatch& m) noexcept {
  reports.push_back(report{m.site, m.given, m.current, m.provider, m.device});
}

/// Turns the check on with the recording reporter for a test case, and off again after.
struct checking {
  checking() {
    reports.clear();
    (void)streamlike::set_current_stream_check_reporter(&record);
    streamlike::set_current_stream_check(true);
  }
  checking(const checking&) = delete;
  checking& operator=(const checking&) = delete;
  ~checking() {
    streamlike::set_current_stream_check(false);
    (void)streamlike::set_current_stream_check_reporter(nullptr);
  }
};

thread_local void* framework_stream = nullptr;
int framework_get(void*, int32_t, void** stream) {
  *stream = framework_stream;
  return STREAMLIKE_CURRENT_STREAM_OK;
}

const stream_view s1 = host_test::fake_cuda_stream(0);
const stream_view s2 = host_test::fake_cuda_stream(0);
const stream_view unknown{fake_handle(0x2000)}; // not a stream of the fake

} // namespace

TEST_CASE("the check starts as STREAMLIKE_CHECK_CURRENT_STREAM says") {
  // The suite runs this program without the variable (off), with it set to 1 (on), to 0 and to the
  // empty string (off); STREAMLIKE_TEST_CHECK_EXPECTED says which the run expects.
  const char* expected = std::getenv("STREAMLIKE_TEST_CHECK_EXPECTED");
  REQUIRE((std::getenv("STREAMLIKE_CHECK_CURRENT_STREAM") == nullptr || expected != nullptr));
  const bool set = expected != nullptr && std::string(expected) == "on";
  CHECK(streamlike::current_stream_check_enabled() == set);
  if (set) {
    reports.clear();
    (void)streamlike::set_current_stream_check_reporter(&record);
    streamlike::check_current_stream(s2, device, "from-environment.cpp:1"); // s2 is not current: reported
    CHECK(reports.size() == 1);
    (void)streamlike::set_current_stream_check_reporter(nullptr);
    streamlike::set_current_stream_check(false); // the other cases start from off
  }
}

TEST_CASE("the check is off unless STREAMLIKE_CHECK_CURRENT_STREAM or a call turns it on") {
  CHECK_FALSE(streamlike::current_stream_check_enabled());
  reports.clear();
  (void)streamlike::set_current_stream_check_reporter(&record);
  streamlike::check_current_stream(s1, device, "off.cpp:1");
  CHECK(reports.empty());
  (void)streamlike::set_current_stream_check_reporter(nullptr);
  streamlike::set_current_stream_check(true);
  CHECK(streamlike::current_stream_check_enabled());
  streamlike::set_current_stream_check(false);
}

TEST_CASE("a stream other than the current one is reported once per call site, naming the provider") {
  const checking on;
  streamlike_current_stream_provider framework = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
  framework.priority = 10;
  framework.name = "framework";
  framework.get = &framework_get;
  streamlike::register_current_stream_provider(framework);
  framework_stream = s1.get();

  streamlike::check_current_stream(s1, device, "agree.cpp:1"); // the current one: silent
  CHECK(reports.empty());

  streamlike::check_current_stream(s2, device, "launch.cpp:10");
  streamlike::check_current_stream(s2, device, "launch.cpp:10"); // same site: once
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].site == "launch.cpp:10");
  CHECK(reports[0].given == s2);
  CHECK(reports[0].current == s1);
  CHECK(reports[0].provider == "framework");
  CHECK(reports[0].device == device);

  streamlike::check_current_stream(s2, device, "launch.cpp:20"); // another site: reported too
  CHECK(reports.size() == 2);

  (void)streamlike::unregister_current_stream_provider("framework");
  framework_stream = nullptr;
}

TEST_CASE("inside a scope, launching on its stream is silent and on another is reported") {
  const checking on;
  const streamlike::scoped_current_stream guard{s1, device};
  streamlike::check_current_stream(s1, device, "scoped.cpp:1");
  CHECK(reports.empty());
  streamlike::check_current_stream(s2, device, "scoped.cpp:2");
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].current == s1);
  CHECK(reports[0].provider == "streamlike");
}

TEST_CASE("a stream whose device cannot be read is not reported (and nothing throws)") {
  REQUIRE(fake_cuda_present() == 1);
  const checking on;
  streamlike::check_current_stream(unknown, "nodevice.cpp:1");
  CHECK(reports.empty());
  streamlike::check_current_stream(s2, "known.cpp:1"); // its device is read: reported
  CHECK(reports.size() == 1);
}
