// current_stream() and scoped_current_stream with the built-in framework providers, found in the
// stand-ins for libtorch_cuda.so and libtvm_ffi.so (test/fake_frameworks, loaded before the first
// test) exactly as in a process that imported torch and tvm-ffi, over the fake CUDA of
// test/fake_cuda (exported from this program, two devices). What each framework is handed
// and answers is read from the stand-ins themselves. No GPU, no framework.
#include "fake_cuda_streams.hpp"
#include "host_support.hpp"
#include "loaded_frameworks.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_check.hpp>
#include <streamlike/current_stream_providers.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <dlfcn.h>

namespace {

using host_test::fake_handle;
using streamlike::stream_view;

using namespace host_test::loaded;

struct default_stream_case {
  const char* name;
  stream_view stream;
  void* torch_sees; // torch's name for it
  void* tvm_sees;   // tvm-ffi's (it launches on whatever handle it is given)
};

const stream_view legacy = stream_view::legacy_default();
const stream_view per_thread = stream_view::per_thread_default();
const stream_view zero{cudaStream_t{}};

} // namespace

TEST_CASE("one default stream: torch is handed handle 0 for the legacy default stream, on every device") {
  require_setup();
  const default_stream_case cases[] = {
      {"legacy default (0x1)", legacy, nullptr, cudaStreamLegacy},
      {"handle 0", zero, nullptr, nullptr},
      {"per-thread default (0x2)", per_thread, cudaStreamPerThread, cudaStreamPerThread},
  };
  for (const auto& c : cases) {
    // Device 0 is current (torch's guard serves), device 1 is not (get + set by handle).
    for (int device = 0; device < 2; ++device) {
      CAPTURE(c.name);
      CAPTURE(device);
      const stream_view before = host_test::fake_cuda_stream(device);
      set_torch(device, before.get());
      {
        const streamlike::scoped_current_stream scope{c.stream, device};
        CHECK(torch_current(device) == c.torch_sees);
        CHECK(tvm_current(device) == c.tvm_sees);
        CHECK(streamlike::same_current_stream(streamlike::current_stream(device), c.stream));
        CHECK(streamlike::current_stream_conflicts(device).empty());
      }
      CHECK(torch_current(device) == before.get());
      CHECK(tvm_current(device) == nullptr);
      reset_frameworks();
    }
  }
}

TEST_CASE("same_current_stream: 0 and cudaStreamLegacy are one stream, cudaStreamPerThread another") {
  CHECK(streamlike::same_current_stream(zero, legacy));
  CHECK(streamlike::same_current_stream(legacy, zero));
  CHECK(streamlike::same_current_stream(legacy, legacy));
  CHECK_FALSE(streamlike::same_current_stream(per_thread, zero));
  CHECK_FALSE(streamlike::same_current_stream(per_thread, legacy));
  CHECK_FALSE(streamlike::same_current_stream(stream_view{fake_handle(0x1000)}, legacy));
  CHECK(streamlike::same_current_stream(stream_view{fake_handle(0x1000)}, stream_view{fake_handle(0x1000)}));
}

TEST_CASE("conflicts: frameworks that agree are no conflict, whatever they call the default stream") {
  require_setup();
  const stream_view s = host_test::fake_cuda_stream(0);
  SUBCASE("both frameworks' own blocks name one stream; streamlike's unset slot is not an answer") {
    set_torch(0, s.get());
    set_tvm(0, s.get());
    CHECK(streamlike::current_stream_conflicts(0).empty());
    CHECK(streamlike::current_stream(0) == s);
  }
  SUBCASE("torch names 0, tvm-ffi cudaStreamLegacy: the same stream") {
    set_tvm(0, cudaStreamLegacy);
    CHECK(streamlike::current_stream_conflicts(0).empty());
  }
  SUBCASE("torch names 0, tvm-ffi cudaStreamPerThread: two streams") {
    set_tvm(0, cudaStreamPerThread);
    const auto conflicts = streamlike::current_stream_conflicts(0);
    REQUIRE(conflicts.size() == 2);
    CHECK(conflicts[0].provider == "torch");
    CHECK(conflicts[0].stream == zero);
    CHECK(conflicts[1].provider == "tvm-ffi");
    CHECK(conflicts[1].stream == per_thread);
  }
  reset_frameworks();
}

namespace {
std::vector<std::string> reported_sites;
void record(const streamlike::current_stream_mismatch& m) noexcept { reported_sites.emplace_back(m.site); }
} // namespace

TEST_CASE("the check: the legacy default stream given where torch names 0 is the current stream") {
  require_setup();
  reported_sites.clear();
  (void)streamlike::set_current_stream_check_reporter(&record);
  streamlike::set_current_stream_check(true);
  streamlike::check_current_stream(legacy, 0, "legacy.py:1"); // the casters' reading of (0, 0)
  streamlike::check_current_stream(zero, 0, "zero.py:1");
  CHECK(reported_sites.empty());
  streamlike::check_current_stream(per_thread, 0, "per_thread.py:1");
  CHECK(reported_sites == std::vector<std::string>{"per_thread.py:1"});
  streamlike::set_current_stream_check(false);
  (void)streamlike::set_current_stream_check_reporter(nullptr);
}

TEST_CASE("inside a scope, a framework's own block wins whatever it names; two blocks: torch decides") {
  require_setup();
  const stream_view s = host_test::fake_cuda_stream(0);
  const stream_view t = host_test::fake_cuda_stream(0);
  {
    const streamlike::scoped_current_stream scope{s, 0};
    CHECK(streamlike::current_stream(0) == s);
    set_torch(0, nullptr); // with torch.cuda.stream(torch.cuda.default_stream()):
    CHECK(streamlike::current_stream(0) == zero);
    set_tvm(0, t.get()); // and a tvm-ffi block inside that: torch's block still decides
    CHECK(streamlike::current_stream(0) == zero);
    set_torch(0, s.get()); // torch's block ends: tvm-ffi's answers
    CHECK(streamlike::current_stream(0) == t);
    set_tvm(0, s.get()); // tvm-ffi's ends
    CHECK(streamlike::current_stream(0) == s);
    CHECK(streamlike::current_stream(1) == zero); // device 1: no scope there
  }
  CHECK(torch_current(0) == nullptr);
  CHECK(streamlike::current_stream(0) == zero);
  reset_frameworks();
}

namespace {
int current_device() {
  int device = -1;
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  return device;
}
} // namespace

TEST_CASE("a scope leaves the current device alone, entering and leaving, with torch loaded too") {
  require_setup();
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  const stream_view on_0 = host_test::fake_cuda_stream(0);
  const stream_view on_1 = host_test::fake_cuda_stream(1);
  {
    const streamlike::scoped_current_stream scope{on_1}; // device 1, while 0 is current
    CHECK(current_device() == 0);
    CHECK(torch_current(1) == on_1.get());
  }
  CHECK(current_device() == 0);
  {
    const streamlike::scoped_current_stream scope{on_0}; // torch's guard serves here
    CHECK(torch_current(0) == on_0.get());
    REQUIRE(cudaSetDevice(1) == cudaSuccess); // the code inside changes device
  }
  CHECK(current_device() == 1); // and leaving the scope did not change it back
  CHECK(torch_current(0) == nullptr);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  reset_frameworks();
}

TEST_CASE("tvm-ffi: a scope enters with TVMFFIEnvSetStream's out-parameter (no read) on kDLCUDA, and leaves") {
  require_setup();
  void* tvm = dlopen(FAKE_TVM_FFI, RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(tvm != nullptr);
  const auto get_calls = reinterpret_cast<long (*)()>(dlsym(tvm, "fake_tvm_ffi_get_calls"));
  REQUIRE(static_cast<bool>(get_calls));
  const stream_view before = host_test::fake_cuda_stream(0);
  const stream_view s = host_test::fake_cuda_stream(0);
  set_tvm(0, before.get());
  const long reads = get_calls();
  {
    const streamlike::scoped_current_stream scope{s, 0};
    CHECK(get_calls() == reads); // the original came back through the out-parameter
    CHECK(tvm_current(0) == s.get());
    CHECK(fw().tvm_get(dl_cuda + 1, 0) == nullptr); // another device type: untouched
  }
  CHECK(tvm_current(0) == before.get());
  reset_frameworks();
}
