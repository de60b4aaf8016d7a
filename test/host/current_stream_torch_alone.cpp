// current_stream() in the two processes most users run, whose provider lists it reads without
// walking them (src/current_stream.cpp): nothing loaded (streamlike's own provider alone), then
// torch alone (torch's stand-in, test/fake_frameworks, loaded by the second test case). Each row
// of the table is checked against the rule of docs/current-stream.md, outside and inside scopes,
// on both devices of the fake CUDA, and from a thread that set nothing. The test cases run in
// file order: the first one needs the process before torch is loaded.
#include "fake_cuda_streams.hpp"
#include "host_support.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>

namespace {

using streamlike::current_stream;
using streamlike::scoped_current_stream;
using streamlike::stream_view;

std::vector<std::string> provider_names() {
  std::vector<std::string> names;
  for (const auto& p : streamlike::current_stream_providers()) names.push_back(p.name);
  return names;
}

void* on_another_thread(int device) {
  void* seen = nullptr;
  std::thread([&] { seen = current_stream(device).get(); }).join();
  return seen;
}

} // namespace

TEST_CASE("nothing loaded: streamlike's own provider alone answers, the default stream outside scopes") {
  REQUIRE(fake_cuda_present() == 1);
  REQUIRE(provider_names() == std::vector<std::string>{"streamlike"});
  for (int device = 0; device < host_test::fake_devices; ++device) {
    CAPTURE(device);
    const stream_view s = host_test::fake_cuda_stream(device);
    CHECK(current_stream(device).get() == nullptr);
    {
      const scoped_current_stream scope{s};
      CHECK(current_stream(device) == s);
      CHECK(current_stream(1 - device).get() == nullptr);
      CHECK(on_another_thread(device) == nullptr);
      {
        const scoped_current_stream inner{stream_view::legacy_default(), device};
        CHECK(current_stream(device) == stream_view::legacy_default());
      }
      CHECK(current_stream(device) == s);
    }
    CHECK(current_stream(device).get() == nullptr);
  }
}

TEST_CASE("torch alone: torch's answer, default streams included, outside scopes; a scope's or torch's inner block's "
          "inside") {
  void* torch = dlopen(FAKE_TORCH, RTLD_NOW | RTLD_GLOBAL);
  REQUIRE(torch != nullptr);
  const auto set_torch =
      reinterpret_cast<std::int32_t (*)(void*, std::int32_t)>(dlsym(torch, "torch_set_current_cuda_stream"));
  REQUIRE_MESSAGE(static_cast<bool>(set_torch), "the stand-in for libtorch_cuda.so has no setter");
  REQUIRE(provider_names() == std::vector<std::string>{"torch", "streamlike"});

  struct row {
    const char* torch_names;
    int device;
  };
  for (const row r : {row{"nothing", 0}, row{"the legacy default stream", 0}, row{"the per-thread default stream", 1},
                      row{"a stream", 0}, row{"a stream", 1}}) {
    CAPTURE(r.torch_names);
    CAPTURE(r.device);
    const std::string what = r.torch_names;
    void* const torch_stream = what == "nothing"                         ? nullptr
                               : what == "the legacy default stream"     ? stream_view::legacy_default().get()
                               : what == "the per-thread default stream" ? stream_view::per_thread_default().get()
                                                                         : host_test::fake_cuda_stream(r.device).get();
    REQUIRE(set_torch(torch_stream, r.device) == 0);
    // Outside any scope: torch's answer, whatever it names (the only framework that answers).
    CHECK(current_stream(r.device).get() == torch_stream);
    CHECK(current_stream(1 - r.device).get() == nullptr);
    CHECK(on_another_thread(r.device) == nullptr);
    {
      const stream_view s = host_test::fake_cuda_stream(r.device);
      const scoped_current_stream scope{s};
      CHECK(current_stream(r.device) == s); // the scope set torch too
      // torch's own block inside the scope wins, a default stream too.
      REQUIRE(set_torch(stream_view::legacy_default().get(), r.device) == 0);
      CHECK(current_stream(r.device) == stream_view::legacy_default());
      REQUIRE(set_torch(s.get(), r.device) == 0);
      CHECK(current_stream(r.device) == s);
    }
    CHECK(current_stream(r.device).get() == torch_stream); // the scope gave torch back its stream
    REQUIRE(set_torch(nullptr, r.device) == 0);
    CHECK(current_stream(r.device).get() == nullptr);
  }
}
