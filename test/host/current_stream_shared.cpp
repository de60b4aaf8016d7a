// One current-stream registry per process (docs/current-stream.md, "One registry per process"):
// three copies of streamlike, each in a library loaded RTLD_LOCAL as extension modules are
// (test/host/current_stream_copy.cpp: one linked to libstreamlike.so, two holding static copies of
// their own), in the order STREAMLIKE_TEST_COPY_ORDER names, see one registry: a provider
// registered through any, a scope opened in any, read from any other. This program links no copy
// of streamlike itself, so a static copy can be the first. It carries the fake CUDA (two devices).
//
// STREAMLIKE_TEST_PUBLISHED (set by test/host/meson.build) puts a table in place before any copy
// loads: "another-major" and "too-short" (refused: each copy keeps its own registry, saying so),
// "newer-minor" (joined: its functions answer), "wrong-nonce" (a genuine table the variable's nonce
// does not name: replaced), "stale" (the variable holds what meson.build gives it: replaced).
#include "fake_cuda_streams.hpp"
#include "host_support.hpp"

#include <streamlike/c/current_stream_registry.h>

#include <cuda_runtime_api.h>

#include <doctest/doctest.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using host_test::contains;

/// One library holding a copy, and its functions (test/host/current_stream_copy.cpp).
struct copy {
  std::string name;
  void* handle = nullptr;
  const void* (*registry)() = nullptr;
  const char* (*last_error)() = nullptr;
  int (*current)(int, void**) = nullptr;
  int (*enter)(void*, int, void**) = nullptr;
  void (*leave)(void*) = nullptr;
  int (*register_provider)(const streamlike_current_stream_provider*) = nullptr;
  int (*unregister)(const char*, int*) = nullptr;
  const char* (*providers)() = nullptr;
  const char* (*conflicts)(int) = nullptr;

  void* current_on(int device) const {
    void* stream = reinterpret_cast<void*>(0xdead);
    REQUIRE_MESSAGE(current(device, &stream) == 0, name, ": ", last_error());
    return stream;
  }
  void* open(void* stream, int device = -1) const {
    void* scope = nullptr;
    REQUIRE_MESSAGE(enter(stream, device, &scope) == 0, name, ": ", last_error());
    return scope;
  }
};

template <class F>
void find(void* handle, const char* symbol, F& out) {
  void* const address = dlsym(handle, symbol);
  REQUIRE_MESSAGE(address != nullptr, symbol, ": ", dlerror());
  out = reinterpret_cast<F>(address);
}

// --- A table put in place before any copy loads --------------------------------------------------

std::string published_mode() {
  const char* mode = std::getenv("STREAMLIKE_TEST_PUBLISHED");
  return mode != nullptr ? mode : "";
}

void* const crafted_answer = reinterpret_cast<void*>(0x5eed);
int crafted_current(int32_t, void** stream) {
  *stream = crafted_answer;
  return STREAMLIKE_CURRENT_STREAM_OK;
}

/// A table of a later minor: the fields of 1.0 and one more, which no 1.0 reader may read.
struct newer_table {
  streamlike_current_stream_registry known;
  void* appended;
};
newer_table crafted{};

void publish_crafted(const std::string& mode) {
  streamlike_current_stream_registry& t = crafted.known;
  t.magic = STREAMLIKE_CURRENT_STREAM_REGISTRY_MAGIC;
  t.nonce = 0x1234abcd;
  t.self = &t;
  t.struct_size = sizeof t;
  t.major_version = STREAMLIKE_CURRENT_STREAM_REGISTRY_MAJOR_VERSION;
  t.minor_version = STREAMLIKE_CURRENT_STREAM_REGISTRY_MINOR_VERSION;
  t.current = &crafted_current;
  if (mode == "another-major") t.major_version += 1;
  if (mode == "too-short") t.struct_size = offsetof(streamlike_current_stream_registry, current);
  if (mode == "newer-minor") {
    t.minor_version += 1;
    t.struct_size = sizeof crafted;
  }
  // "wrong-nonce": a genuine table, but not the one the variable's nonce names (a stale value).
  const unsigned long long nonce = mode == "wrong-nonce" ? 0x1234abceULL : 0x1234abcdULL;
  char value[96];
  std::snprintf(value, sizeof value, "%d:%p:%#llx", 1, static_cast<void*>(&t), nonce);
  REQUIRE(setenv(STREAMLIKE_CURRENT_STREAM_REGISTRY_VARIABLE, value, 1) == 0);
}

/// The copies, loaded on first use in the order STREAMLIKE_TEST_COPY_ORDER names ("shared", "a", "b").
const std::vector<copy>& copies() {
  static const std::vector<copy> loaded = [] {
    fake_cuda_set_devices(host_test::fake_devices);
    if (const std::string mode = published_mode(); mode != "" && mode != "stale") publish_crafted(mode);
    const char* order_text = std::getenv("STREAMLIKE_TEST_COPY_ORDER");
    std::string order = order_text != nullptr ? order_text : "shared,a,b";
    std::vector<copy> out;
    for (std::size_t at = 0; at <= order.size();) {
      const std::size_t comma = std::min(order.find(',', at), order.size());
      const std::string name = order.substr(at, comma - at);
      at = comma + 1;
      const char* path = name == "shared" ? COPY_SHARED : name == "a" ? COPY_A : COPY_B;
      copy c;
      c.name = name;
      c.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      REQUIRE_MESSAGE(c.handle != nullptr, path, ": ", dlerror());
      find(c.handle, "copy_registry", c.registry);
      find(c.handle, "copy_last_error", c.last_error);
      find(c.handle, "copy_current", c.current);
      find(c.handle, "copy_enter", c.enter);
      find(c.handle, "copy_leave", c.leave);
      find(c.handle, "copy_register", c.register_provider);
      find(c.handle, "copy_unregister", c.unregister);
      find(c.handle, "copy_providers", c.providers);
      find(c.handle, "copy_conflicts", c.conflicts);
      out.push_back(c);
    }
    return out;
  }();
  return loaded;
}

/// A framework's current stream per thread and device (as torch and CuPy keep it), registered
/// through one copy under a name of the test's choosing.
struct framework {
  static thread_local void* current[2];
  static int get(void*, int32_t device, void** stream) {
    *stream = current[device];
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
  static int set(void*, int32_t device, void* stream) {
    current[device] = stream;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
  static streamlike_current_stream_provider table(const char* name) {
    streamlike_current_stream_provider p = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
    p.priority = 150;
    p.name = name;
    p.get = &get;
    p.set = &set;
    return p;
  }
};
thread_local void* framework::current[2] = {};

/// Unregisters `name` through `via` at the end of a test case.
struct registered {
  const copy& via;
  const char* name;
  ~registered() {
    int removed = 0;
    (void)via.unregister(name, &removed);
  }
};

/// The modes in which the copies share one registry: the first copy's.
bool shared_mode() {
  const std::string mode = published_mode();
  return mode.empty() || mode == "stale" || mode == "wrong-nonce";
}

} // namespace

TEST_CASE("every copy forwards to the registry the first copy published") {
  if (!shared_mode()) return;
  const std::vector<copy>& all = copies();
  REQUIRE(all.size() >= 2);
  const void* first = all.front().registry();
  for (const copy& c : all) CHECK_MESSAGE(c.registry() == first, c.name, " uses another registry");
  // The variable names the first copy's table (also where it held a stale value before).
  const char* value = std::getenv(STREAMLIKE_CURRENT_STREAM_REGISTRY_VARIABLE);
  REQUIRE(value != nullptr);
  char address[32];
  std::snprintf(address, sizeof address,
                ":%#jx:", static_cast<std::uintmax_t>(reinterpret_cast<std::uintptr_t>(first)));
  CHECK_MESSAGE(contains(value, address), value);
  const auto* table = static_cast<const streamlike_current_stream_registry*>(first);
  CHECK(table->magic == STREAMLIKE_CURRENT_STREAM_REGISTRY_MAGIC);
  CHECK(table->self == table);
  CHECK(table->struct_size == sizeof(streamlike_current_stream_registry));
  CHECK(table->major_version == STREAMLIKE_CURRENT_STREAM_REGISTRY_MAJOR_VERSION);
}

TEST_CASE("a provider registered through one copy is asked by every other, and removed through any") {
  if (!shared_mode()) return;
  const std::vector<copy>& all = copies();
  const streamlike_current_stream_provider p = framework::table("framework-registered-by-a-copy");
  REQUIRE_MESSAGE(all[1].register_provider(&p) == 0, all[1].last_error());
  const streamlike::stream_view s = host_test::fake_cuda_stream(0);
  framework::current[0] = s.get();
  for (const copy& c : all) {
    CHECK_MESSAGE(contains(c.providers(), "framework-registered-by-a-copy"), c.name, ": ", c.providers());
    CHECK_MESSAGE(c.current_on(0) == s.get(), c.name);
  }
  // The same name through another copy: refused by name, as within one copy.
  CHECK(all[0].register_provider(&p) == 1);
  CHECK_MESSAGE(contains(all[0].last_error(), "already registered"), all[0].last_error());
  int removed = 0;
  REQUIRE(all.back().unregister("framework-registered-by-a-copy", &removed) == 0);
  CHECK(removed == 1);
  for (const copy& c : all) {
    CHECK_FALSE(contains(c.providers(), "framework-registered-by-a-copy"));
    CHECK(c.current_on(0) != s.get());
  }
  framework::current[0] = nullptr;
}

TEST_CASE("a scope opened in one copy is every copy's current stream, and scopes nest across copies") {
  if (!shared_mode()) return;
  const std::vector<copy>& all = copies();
  const streamlike::stream_view outer = host_test::fake_cuda_stream(0);
  const streamlike::stream_view inner = host_test::fake_cuda_stream(0);
  void* before = all[0].current_on(0);
  void* outer_scope = all.front().open(outer.get());
  for (const copy& c : all) CHECK_MESSAGE(c.current_on(0) == outer.get(), c.name);
  void* inner_scope = all.back().open(inner.get());
  for (const copy& c : all) CHECK_MESSAGE(c.current_on(0) == inner.get(), c.name);
  all.back().leave(inner_scope);
  for (const copy& c : all) CHECK_MESSAGE(c.current_on(0) == outer.get(), c.name);
  all.front().leave(outer_scope);
  for (const copy& c : all) CHECK_MESSAGE(c.current_on(0) == before, c.name);
  // Device 1 was never touched.
  for (const copy& c : all) CHECK(c.current_on(1) == nullptr);
}

TEST_CASE("every copy's current stream of the current device is the registry's, whichever device is current") {
  if (!shared_mode()) return;
  const std::vector<copy>& all = copies();
  const streamlike::stream_view on_device_1 = host_test::fake_cuda_stream(1);
  void* scope = all.front().open(on_device_1.get(), 1);
  int before = -1;
  REQUIRE(cudaGetDevice(&before) == cudaSuccess);
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  for (const copy& c : all) CHECK_MESSAGE(c.current_on(-1) == on_device_1.get(), c.name);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  for (const copy& c : all) CHECK_MESSAGE(c.current_on(-1) == c.current_on(0), c.name);
  for (const copy& c : all) CHECK_MESSAGE(c.current_on(-1) != on_device_1.get(), c.name);
  REQUIRE(cudaSetDevice(before) == cudaSuccess);
  all.front().leave(scope);
}

TEST_CASE("a scope of one copy sets a provider registered through another, and puts it back") {
  if (!shared_mode()) return;
  const std::vector<copy>& all = copies();
  const streamlike_current_stream_provider p = framework::table("framework-set-by-another-copy");
  REQUIRE_MESSAGE(all.back().register_provider(&p) == 0, all.back().last_error());
  const registered cleanup{all.back(), "framework-set-by-another-copy"};
  const streamlike::stream_view previous = host_test::fake_cuda_stream(0);
  const streamlike::stream_view s = host_test::fake_cuda_stream(0);
  framework::current[0] = previous.get();
  void* scope = all.front().open(s.get());
  CHECK(framework::current[0] == s.get());
  all.front().leave(scope);
  CHECK(framework::current[0] == previous.get());
  framework::current[0] = nullptr;
}

TEST_CASE("a framework block inside another copy's scope wins in every copy, a default stream too") {
  if (!shared_mode()) return;
  const std::vector<copy>& all = copies();
  const streamlike_current_stream_provider p = framework::table("framework-with-a-block");
  REQUIRE_MESSAGE(all[0].register_provider(&p) == 0, all[0].last_error());
  const registered cleanup{all[0], "framework-with-a-block"};
  const streamlike::stream_view s = host_test::fake_cuda_stream(0);
  void* scope = all[1].open(s.get());
  // The framework's own block on its default stream (torch's name for it: the handle 0), opened
  // inside the scope: the stream that framework's code launches on now.
  void* const saved = framework::current[0];
  framework::current[0] = nullptr;
  for (const copy& c : all) CHECK_MESSAGE(c.current_on(0) == nullptr, c.name);
  const std::string conflicts = all.back().conflicts(0);
  CHECK_MESSAGE(conflicts.rfind("framework-with-a-block=", 0) == 0, conflicts);
  framework::current[0] = saved; // the block ends
  for (const copy& c : all) CHECK_MESSAGE(c.current_on(0) == s.get(), c.name);
  all[1].leave(scope);
  framework::current[0] = nullptr;
}

TEST_CASE("every copy refuses a device the process lacks, and a stream of another device, by name") {
  if (!shared_mode()) return;
  for (const copy& c : copies()) {
    void* stream = nullptr;
    CHECK(c.current(5, &stream) == 1);
    CHECK_MESSAGE(contains(c.last_error(), "device 5 does not exist"), c.last_error());
    void* scope = nullptr;
    const streamlike::stream_view on_device_1 = host_test::fake_cuda_stream(1);
    CHECK(c.enter(on_device_1.get(), 0, &scope) == 1);
    CHECK_MESSAGE(contains(c.last_error(), "belongs to device 1, not device 0"), c.last_error());
  }
}

TEST_CASE("every copy refuses to remove streamlike's own provider by name, and finds no unknown one") {
  if (!shared_mode()) return;
  for (const copy& c : copies()) {
    int removed = -1;
    CHECK_MESSAGE(c.unregister("streamlike", &removed) == 1, c.name, ": ", c.last_error());
    CHECK_MESSAGE(contains(c.last_error(), "streamlike"), c.last_error());
    removed = -1;
    CHECK_MESSAGE(c.unregister("no-provider-of-this-name", &removed) == 0, c.name, ": ", c.last_error());
    CHECK(removed == 0);
  }
  // The table itself, as a C caller asks it: each answer its own status.
  const auto* table = static_cast<const streamlike_current_stream_registry*>(copies().front().registry());
  char message[256] = {};
  const int own = table->unregister_provider("streamlike", message, sizeof message);
  CHECK(own == STREAMLIKE_CURRENT_STREAM_REGISTRY_INVALID_ARGUMENT);
  CHECK(own != STREAMLIKE_CURRENT_STREAM_NOT_FOUND);
  CHECK_MESSAGE(contains(message, "cannot be removed"), message);
  CHECK(table->unregister_provider("no-provider-of-this-name", message, sizeof message) ==
        STREAMLIKE_CURRENT_STREAM_NOT_FOUND);
}

TEST_CASE("a published table this streamlike cannot read is not joined: each copy keeps its own") {
  const std::string mode = published_mode();
  if (mode != "another-major" && mode != "too-short") return;
  const std::vector<copy>& all = copies();
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i].registry() != &crafted.known);
    for (std::size_t j = 0; j < i; ++j) CHECK(all[i].registry() != all[j].registry());
    CHECK(all[i].current_on(0) != crafted_answer); // the crafted functions are never called
  }
  // Nobody overwrote the table's variable: another copy of that other version may rely on it.
  const char* value = std::getenv(STREAMLIKE_CURRENT_STREAM_REGISTRY_VARIABLE);
  REQUIRE(value != nullptr);
  CHECK(contains(value, "0x1234abcd"));
}

TEST_CASE("a published table of a newer minor is joined: its functions answer") {
  if (published_mode() != "newer-minor") return;
  for (const copy& c : copies()) {
    CHECK(c.registry() == &crafted.known);
    CHECK(c.current_on(0) == crafted_answer);
  }
}
