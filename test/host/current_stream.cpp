// current_stream() and scoped_current_stream with fake providers: no GPU, no framework. The
// program carries the fake CUDA of test/fake_cuda (two devices): streams are its streams.
#include "fake_cuda_streams.hpp"
#include "fake_cuda_support.hpp"
#include "host_support.hpp"
#include "thread_local_framework.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>

#include <doctest/doctest.h>

#include <array>
#include <memory>
#include <new>
#include <optional>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using host_test::fake_handle;
using streamlike::stream_view;

constexpr int device = 0;

/// A framework's current stream: one per thread and device, as torch and CuPy keep it.
struct fake_framework {
  static constexpr std::size_t devices = 4;
  static thread_local std::array<void*, devices> current;
  static thread_local int sets; // how many times set was called on this thread
  static thread_local bool fail_set;
  static thread_local bool unavailable;

  static int get(void*, int32_t dev, void** stream) {
    if (unavailable) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
    *stream = current.at(static_cast<std::size_t>(dev));
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
  static int set(void*, int32_t dev, void* stream) {
    if (unavailable) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
    if (fail_set) return STREAMLIKE_CURRENT_STREAM_FAILED;
    ++sets;
    current.at(static_cast<std::size_t>(dev)) = stream;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
};
thread_local std::array<void*, fake_framework::devices> fake_framework::current{};
thread_local int fake_framework::sets = 0;
thread_local bool fake_framework::fail_set = false;
thread_local bool fake_framework::unavailable = false;

/// A second framework, so that two can disagree.
using other_framework = thread_local_framework<struct other_framework_tag>;

/// A framework whose current stream is more than a handle: enter saves a token, leave restores it.
struct token_framework {
  struct token {
    void* previous;
    int serial;
  };
  static thread_local void* current;
  static thread_local int enters;
  static thread_local int leaves;
  static int get(void*, int32_t, void** stream) {
    *stream = current;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
  static int enter(void*, int32_t, void* stream, void** out) {
    *out = new token{current, ++enters};
    current = stream;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
  static int leave(void*, int32_t, void* t) {
    auto* saved = static_cast<token*>(t);
    current = saved->previous;
    ++leaves;
    delete saved;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
};
thread_local void* token_framework::current = nullptr;
thread_local int token_framework::enters = 0;
thread_local int token_framework::leaves = 0;

streamlike_current_stream_provider table(const char* name, int32_t priority, decltype(&fake_framework::get) get,
                                         decltype(&fake_framework::set) set) {
  streamlike_current_stream_provider p = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
  p.priority = priority;
  p.name = name;
  p.get = get;
  p.set = set;
  return p;
}

/// Registers a provider for a test case's duration.
struct registered {
  std::string name;
  explicit registered(const streamlike_current_stream_provider& p) : name(p.name) {
    streamlike::register_current_stream_provider(p);
  }
  registered(const registered&) = delete;
  registered& operator=(const registered&) = delete;
  ~registered() { (void)streamlike::unregister_current_stream_provider(name); }
};

void reset_fakes() {
  fake_framework::current = {};
  fake_framework::sets = 0;
  fake_framework::fail_set = false;
  fake_framework::unavailable = false;
  other_framework::current = nullptr;
}

std::vector<std::string> provider_names() {
  std::vector<std::string> names;
  for (const auto& p : streamlike::current_stream_providers()) names.push_back(p.name);
  return names;
}

const stream_view s1 = host_test::fake_cuda_stream(0);
const stream_view s2 = host_test::fake_cuda_stream(0);
const stream_view s3 = host_test::fake_cuda_stream(0);

} // namespace

TEST_CASE("without any framework, streamlike's own provider is the only one and the current stream is 0") {
  reset_fakes();
  const auto providers = streamlike::current_stream_providers();
  REQUIRE(providers.size() == 1);
  CHECK(providers[0].name == "streamlike");
  CHECK(providers[0].priority == STREAMLIKE_CURRENT_STREAM_PRIORITY_STREAMLIKE);
  CHECK(providers[0].can_set);
  CHECK(streamlike::current_stream(device) == stream_view{cudaStream_t{}});
  CHECK(streamlike::current_stream_conflicts(device).empty());
}

TEST_CASE("where nothing is named on the thread, current_stream() answers 0 without reading the current device") {
  reset_fakes();
  (void)streamlike::current_stream(); // the first read: a driver answers, and keeps answering
  const auto device_reads = [] { return fake_cuda_calls("cuCtxGetDevice") + fake_cuda_calls("cudaGetDevice"); };
  const long before = device_reads();
  CHECK(streamlike::current_stream() == stream_view{cudaStream_t{}});
  CHECK(device_reads() == before);
  {
    const streamlike::scoped_current_stream guard{host_test::fake_cuda_stream(1)}; // device 1; 0 is current
    CHECK(streamlike::current_stream() == stream_view{cudaStream_t{}});
    CHECK(device_reads() > before); // a stream is named on some device: which one is current matters
  }
  {
    const streamlike::scoped_current_stream guard{s1};
    CHECK(streamlike::current_stream() == s1);
  }
  const long after_scopes = device_reads();
  CHECK(streamlike::current_stream() == stream_view{cudaStream_t{}});
  CHECK(device_reads() == after_scopes); // the scopes left nothing named
  const registered fake{table("fake", 50, &fake_framework::get, &fake_framework::set)};
  fake_framework::current[device] = s3.get();
  CHECK(streamlike::current_stream() == s3); // a provider answers: the device is read again
  CHECK(device_reads() > after_scopes);
}

TEST_CASE("scopes that end out of order leave the outer stream named after both, and current_stream() answers it") {
  reset_fakes();
  std::thread([] { // what is left named stays with this thread
    auto a = std::make_unique<streamlike::scoped_current_stream>(s1);
    auto b = std::make_unique<streamlike::scoped_current_stream>(s2);
    a.reset(); // puts back what a found (nothing) while b is still open
    CHECK(streamlike::current_stream() == s2);
    b.reset(); // puts back what b found: s1, with no scope open (docs/current-stream.md, asyncio)
    CHECK(streamlike::current_stream() == s1);
    CHECK(streamlike::current_stream(device) == s1);
  })
      .join();
  CHECK(streamlike::current_stream() == stream_view{cudaStream_t{}}); // another thread's
}

TEST_CASE("a scope makes its stream current on its device only, and restores it on exit") {
  reset_fakes();
  {
    const streamlike::scoped_current_stream guard{s1, device};
    CHECK(guard.stream() == s1);
    CHECK(guard.device() == device);
    CHECK(streamlike::current_stream(device) == s1);
    CHECK(streamlike::current_stream(1) == stream_view{cudaStream_t{}}); // another device: untouched
    {
      const streamlike::scoped_current_stream inner{s2, device};
      CHECK(streamlike::current_stream(device) == s2);
    }
    CHECK(streamlike::current_stream(device) == s1);
  }
  CHECK(streamlike::current_stream(device) == stream_view{cudaStream_t{}});
}

TEST_CASE("a scope accepts any stream_like object") {
  reset_fakes();
  const cudaStream_t raw = host_test::fake_cuda_stream(0).get();
  const cuda::stream_ref ref{host_test::fake_cuda_stream(0).get()};
  {
    const streamlike::scoped_current_stream guard{raw, device};
    CHECK(streamlike::current_stream(device) == stream_view{raw});
  }
  {
    const streamlike::scoped_current_stream guard{ref, device};
    CHECK(streamlike::current_stream(device) == stream_view{ref});
  }
}

TEST_CASE("a scope sets every provider that can set, and restores each, also when an exception leaves it") {
  reset_fakes();
  const registered fake{table("fake", 50, &fake_framework::get, &fake_framework::set)};
  fake_framework::current[device] = s3.get(); // the framework had its own stream before
  CHECK(streamlike::current_stream(device) == s3);
  try {
    const streamlike::scoped_current_stream guard{s1, device};
    CHECK(fake_framework::current[device] == s1.get());
    CHECK(streamlike::current_stream(device) == s1);
    throw std::runtime_error("leaves the scope");
  } catch (const std::runtime_error&) {
  }
  CHECK(fake_framework::current[device] == s3.get());
  CHECK(streamlike::current_stream(device) == s3);
}

/// One of many frameworks, each with its own slot, logging the order of its sets.
template <int N>
struct numbered_framework {
  static thread_local void* current;
  static int get(void*, int32_t, void** stream) {
    *stream = current;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
  static int set(void*, int32_t, void* stream);
};
thread_local std::vector<int> numbered_sets;
template <int N>
thread_local void* numbered_framework<N>::current = nullptr;
template <int N>
int numbered_framework<N>::set(void*, int32_t, void* stream) {
  current = stream;
  numbered_sets.push_back(N);
  return STREAMLIKE_CURRENT_STREAM_OK;
}

TEST_CASE("a scope over more providers than it keeps inline sets each, and restores them in reverse order") {
  const auto slots = [] {
    return std::vector<void*>{numbered_framework<0>::current, numbered_framework<1>::current,
                              numbered_framework<2>::current, numbered_framework<3>::current,
                              numbered_framework<4>::current, numbered_framework<5>::current,
                              numbered_framework<6>::current, numbered_framework<7>::current};
  };
  // Priorities 10..80, registered out of order: the list's order is 0..7, then streamlike's own.
  const registered r3{table("numbered-3", 40, &numbered_framework<3>::get, &numbered_framework<3>::set)};
  const registered r0{table("numbered-0", 10, &numbered_framework<0>::get, &numbered_framework<0>::set)};
  const registered r1{table("numbered-1", 20, &numbered_framework<1>::get, &numbered_framework<1>::set)};
  const registered r2{table("numbered-2", 30, &numbered_framework<2>::get, &numbered_framework<2>::set)};
  const registered r4{table("numbered-4", 50, &numbered_framework<4>::get, &numbered_framework<4>::set)};
  const registered r5{table("numbered-5", 60, &numbered_framework<5>::get, &numbered_framework<5>::set)};
  const registered r6{table("numbered-6", 70, &numbered_framework<6>::get, &numbered_framework<6>::set)};
  const registered r7{table("numbered-7", 80, &numbered_framework<7>::get, &numbered_framework<7>::set)};
  numbered_framework<7>::current = s3.get(); // one had a stream of its own before
  std::vector<void*> before = slots();
  numbered_sets.clear();
  {
    const streamlike::scoped_current_stream scope{s1, device};
    CHECK(slots() == std::vector<void*>(8, s1.get()));
    CHECK(numbered_sets == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
    numbered_framework<6>::current = s2.get(); // an inner block of the seventh framework wins
    CHECK(streamlike::current_stream(device) == s2);
    numbered_sets.clear();
  }
  CHECK(numbered_sets == std::vector<int>{7, 6, 5, 4, 3, 2, 1, 0});
  CHECK(slots() == before);
}

TEST_CASE("a read-only provider is asked but never set") {
  reset_fakes();
  const registered fake{table("read-only", 50, &fake_framework::get, nullptr)};
  const auto providers = streamlike::current_stream_providers();
  REQUIRE(providers.size() == 2);
  CHECK(providers[0].name == "read-only");
  CHECK_FALSE(providers[0].can_set);
  {
    const streamlike::scoped_current_stream guard{s1, device};
    CHECK(fake_framework::sets == 0);
    CHECK(fake_framework::current[device] == nullptr);
    // The framework names its default stream, streamlike's own names s1: s1 answers.
    CHECK(streamlike::current_stream(device) == s1);
  }
}

TEST_CASE("the rule: in priority order, the first provider naming a non-default stream answers") {
  reset_fakes();
  const registered first{table("first", 10, &fake_framework::get, &fake_framework::set)};
  const registered second{table("second", 20, &other_framework::get, &other_framework::set)};
  CHECK(provider_names() == std::vector<std::string>{"first", "second", "streamlike"});

  SUBCASE("everyone on a default stream: the first answer (0)") {
    CHECK(streamlike::current_stream(device) == stream_view{cudaStream_t{}});
  }
  SUBCASE("only the lower-priority framework names a stream: it answers") {
    other_framework::current = s2.get();
    CHECK(streamlike::current_stream(device) == s2);
  }
  SUBCASE("both name one: the higher priority answers") {
    other_framework::current = s2.get();
    fake_framework::current[device] = s1.get();
    CHECK(streamlike::current_stream(device) == s1);
  }
  SUBCASE("a framework's block opened inside a streamlike scope answers; two such blocks: the first in order") {
    const streamlike::scoped_current_stream guard{s1, device};
    CHECK(streamlike::current_stream(device) == s1);
    other_framework::current = s2.get();             // "with other.stream(s2):" inside
    CHECK(streamlike::current_stream(device) == s2); // `first` names s1 still: the scope's, not its own
    fake_framework::current[device] = s3.get();      // and "with first.stream(s3):" inside that
    CHECK(streamlike::current_stream(device) == s3); // both changed: the first in priority order
    fake_framework::current[device] = s1.get();      // first's block ends
    CHECK(streamlike::current_stream(device) == s2);
    other_framework::current = s1.get(); // other's block ends
    CHECK(streamlike::current_stream(device) == s1);
  }
  SUBCASE("a provider that cannot answer on this thread is skipped") {
    fake_framework::unavailable = true;
    other_framework::current = s2.get();
    CHECK(streamlike::current_stream(device) == s2);
    const streamlike::scoped_current_stream guard{s1, device}; // and not set, without an error
    CHECK(other_framework::current == s1.get());
    fake_framework::unavailable = false;
    CHECK(fake_framework::current[device] == nullptr);
  }
}

TEST_CASE("a provider that fails to set: the scope throws naming it, and the ones already set are restored") {
  reset_fakes();
  const registered first{table("first", 10, &other_framework::get, &other_framework::set)};
  const registered failing{table("failing", 20, &fake_framework::get, &fake_framework::set)};
  other_framework::current = s3.get();
  fake_framework::fail_set = true;
  const auto e = host_test::thrown<streamlike::error>([] {
    const streamlike::scoped_current_stream guard{s1, device};
  });
  REQUIRE(e.has_value());
  CHECK_MESSAGE(host_test::contains(e->what(), "'failing'"), e->what());
  CHECK_MESSAGE(host_test::contains(e->what(), "scoped_current_stream"), e->what());
  CHECK(other_framework::current == s3.get());
  CHECK(streamlike::current_stream(device) == s3);
}

TEST_CASE("current_stream_conflicts lists every answer when providers disagree, the chosen one first") {
  reset_fakes();
  const registered first{table("first", 10, &fake_framework::get, &fake_framework::set)};
  const registered second{table("second", 20, &other_framework::get, &other_framework::set)};
  CHECK(streamlike::current_stream_conflicts(device).empty());
  {
    const streamlike::scoped_current_stream guard{s1, device};
    CHECK(streamlike::current_stream_conflicts(device).empty()); // all three agree on s1
    other_framework::current = s2.get();                         // `second`'s own block inside the scope: it answers
    const auto conflicts = streamlike::current_stream_conflicts(device);
    REQUIRE(conflicts.size() == 3);
    CHECK(conflicts[0].provider == "second");
    CHECK(conflicts[0].stream == s2);
    CHECK(conflicts[1].provider == "first");
    CHECK(conflicts[1].stream == s1);
    CHECK(conflicts[2].provider == "streamlike");
    CHECK(conflicts[2].stream == s1);
  }
  other_framework::current = s2.get(); // only `second` names a stream: it answers, listed first
  const auto conflicts = streamlike::current_stream_conflicts(device);
  REQUIRE(conflicts.size() == 2); // streamlike's own slot, set by no scope, is no answer
  CHECK(conflicts[0].provider == "second");
  CHECK(conflicts[0].stream == s2);
  CHECK(conflicts[1].provider == "first");
}

TEST_CASE("each thread has its own current stream") {
  reset_fakes();
  const registered fake{table("fake", 50, &fake_framework::get, &fake_framework::set)};
  const streamlike::scoped_current_stream guard{s1, device};
  stream_view seen_before{cudaStream_t{}};
  stream_view seen_inside{cudaStream_t{}};
  stream_view seen_after{fake_handle(0xdead)};
  void* framework_before = fake_handle(0xdead);
  std::thread other([&] {
    seen_before = streamlike::current_stream(device);
    framework_before = fake_framework::current[device];
    {
      const streamlike::scoped_current_stream inner{s2, device};
      seen_inside = streamlike::current_stream(device);
    }
    seen_after = streamlike::current_stream(device);
  });
  other.join();
  CHECK(seen_before == stream_view{cudaStream_t{}}); // the scope on this thread is not seen there
  CHECK(framework_before == nullptr);
  CHECK(seen_inside == s2);
  CHECK(seen_after == stream_view{cudaStream_t{}});
  CHECK(streamlike::current_stream(device) == s1); // and its scope is not seen here
  CHECK(fake_framework::current[device] == s1.get());
}

TEST_CASE("registration refuses bad providers by name, and a name twice") {
  reset_fakes();
  auto good = table("good", 10, &fake_framework::get, &fake_framework::set);
  auto no_get = good;
  no_get.get = nullptr;
  auto no_name = good;
  no_name.name = "";
  auto bad_version = good;
  bad_version.major_version = 99;
  const auto no_get_error =
      host_test::thrown<std::invalid_argument>([&] { streamlike::register_current_stream_provider(no_get); });
  REQUIRE(no_get_error.has_value());
  CHECK_MESSAGE(host_test::contains(no_get_error->what(), "no get function"), no_get_error->what());
  const auto no_name_error =
      host_test::thrown<std::invalid_argument>([&] { streamlike::register_current_stream_provider(no_name); });
  REQUIRE(no_name_error.has_value());
  CHECK_MESSAGE(host_test::contains(no_name_error->what(), "no name"), no_name_error->what());
  const auto version_error =
      host_test::thrown<std::invalid_argument>([&] { streamlike::register_current_stream_provider(bad_version); });
  REQUIRE(version_error.has_value());
  CHECK_MESSAGE(host_test::contains(version_error->what(), "version 99"), version_error->what());

  const registered once{good};
  const auto twice =
      host_test::thrown<std::invalid_argument>([&] { streamlike::register_current_stream_provider(good); });
  REQUIRE(twice.has_value());
  CHECK_MESSAGE(host_test::contains(twice->what(), "'good' is already registered"), twice->what());
  CHECK(provider_names() == std::vector<std::string>{"good", "streamlike"});

  CHECK_FALSE(streamlike::unregister_current_stream_provider("never-registered"));
  CHECK_THROWS_AS((void)streamlike::unregister_current_stream_provider("streamlike"), std::invalid_argument);
}

TEST_CASE("the C functions register and unregister with result codes") {
  reset_fakes();
  const auto good = table("from-c", 10, &fake_framework::get, &fake_framework::set);
  CHECK(streamlike_current_stream_register(nullptr) == STREAMLIKE_CURRENT_STREAM_BAD_PROVIDER);
  CHECK(streamlike_current_stream_register(&good) == STREAMLIKE_CURRENT_STREAM_REGISTERED);
  CHECK(streamlike_current_stream_register(&good) == STREAMLIKE_CURRENT_STREAM_NAME_TAKEN);
  fake_framework::current[device] = s2.get();
  CHECK(streamlike::current_stream(device) == s2);
  CHECK(streamlike_current_stream_unregister("from-c") == STREAMLIKE_CURRENT_STREAM_REGISTERED);
  CHECK(streamlike_current_stream_unregister("from-c") == STREAMLIKE_CURRENT_STREAM_NOT_FOUND);
  CHECK(streamlike::current_stream(device) == stream_view{cudaStream_t{}});
}

TEST_CASE("restore goes through the provider the scope set: unregistered meanwhile, it is still left") {
  reset_fakes();
  auto fake = table("leaving", 10, &fake_framework::get, &fake_framework::set);
  streamlike::register_current_stream_provider(fake);
  fake_framework::current[device] = s3.get();
  {
    const streamlike::scoped_current_stream guard{s1, device};
    CHECK(fake_framework::sets == 1);
    CHECK(streamlike::unregister_current_stream_provider("leaving"));
  }
  CHECK(fake_framework::sets == 2); // put back on exit: the framework does not keep the scope's stream
  CHECK(fake_framework::current[device] == s3.get());
  CHECK(streamlike::current_stream(device) == stream_view{cudaStream_t{}}); // and no longer asked
}

namespace {
/// Two registrations under one name, each with its own context: which one a leave reaches.
struct counted_tokens {
  int leaves = 0;
  static int get(void*, int32_t, void** stream) {
    *stream = nullptr;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
  static int enter(void* context, int32_t, void*, void** token) {
    *token = context; // the token names the registration that made it
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
  static int leave(void* context, int32_t, void* token) {
    if (token != context) return STREAMLIKE_CURRENT_STREAM_FAILED; // another registration's token
    ++static_cast<counted_tokens*>(context)->leaves;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
};
} // namespace

TEST_CASE("a provider registered again under its name while a scope is open: the scope leaves the one it entered") {
  counted_tokens first_registration;
  counted_tokens second_registration;
  auto p = table("again", 10, &counted_tokens::get, nullptr);
  p.enter = &counted_tokens::enter;
  p.leave = &counted_tokens::leave;
  p.context = &first_registration;
  streamlike::register_current_stream_provider(p);
  {
    const streamlike::scoped_current_stream guard{s1, device};
    CHECK(streamlike::unregister_current_stream_provider("again"));
    p.context = &second_registration;
    streamlike::register_current_stream_provider(p);
  }
  CHECK(first_registration.leaves == 1);
  CHECK(second_registration.leaves == 0);
  CHECK(streamlike::unregister_current_stream_provider("again"));
}

TEST_CASE("current_stream(device, std::nothrow) answers what current_stream(device) does, and never throws") {
  static_assert(noexcept(streamlike::current_stream(device, std::nothrow)));
  reset_fakes();
  const auto both = [](int d) {
    const std::optional<stream_view> quiet = streamlike::current_stream(d, std::nothrow);
    REQUIRE(quiet.has_value());
    CHECK(*quiet == streamlike::current_stream(d));
    return *quiet;
  };
  CHECK(both(device) == stream_view{cudaStream_t{}});
  {
    const streamlike::scoped_current_stream outer{s1, device};
    CHECK(both(device) == s1);
    const stream_view on_1 = host_test::fake_cuda_stream(1);
    {
      const streamlike::scoped_current_stream other{on_1}; // innermost, on device 1
      CHECK(both(device) == s1);                           // the scope on device 0 still answers there
      CHECK(both(1) == on_1);
      const streamlike::scoped_current_stream inner{s2, device};
      CHECK(both(device) == s2);
      CHECK(both(1) == on_1);
    }
    CHECK(both(1) == stream_view{cudaStream_t{}});
  }
  const registered fake{table("fake", 50, &fake_framework::get, &fake_framework::set)};
  {
    const streamlike::scoped_current_stream scope{s1, device};
    CHECK(both(device) == s1);
    fake_framework::current[device] = s3.get(); // the framework's own block, inside the scope
    CHECK(both(device) == s3);
    fake_framework::current[device] = s1.get();
  }
  fake_framework::current[device] = s2.get();
  CHECK(both(device) == s2); // outside any scope: the first provider naming a stream
  fake_framework::current[device] = nullptr;
}

TEST_CASE("current_stream(device, std::nothrow) takes the device as given, makes no CUDA call, refuses below 0") {
  reset_fakes();
  const registered fake{table("fake", 50, &fake_framework::get, &fake_framework::set)};
  fake_framework::current[2] = s3.get(); // device 2: one the fake CUDA's process does not have
  const host_test::calls made = host_test::calls_of([] {
    CHECK(streamlike::current_stream(2, std::nothrow) == s3); // the providers' answer, unchecked
    CHECK(streamlike::current_stream(device, std::nothrow) == stream_view{cudaStream_t{}});
  });
  CHECK_MESSAGE(made.empty(), made.size(), " CUDA call(s), the first ", made.empty() ? "" : made.begin()->first);
  CHECK(host_test::thrown<std::invalid_argument>([] { (void)streamlike::current_stream(2); }).has_value());
  fake_framework::current[2] = nullptr;
  CHECK(streamlike::current_stream(2, std::nothrow) == stream_view{cudaStream_t{}}); // none answers: 0
  CHECK_FALSE(streamlike::current_stream(streamlike::current_device, std::nothrow).has_value());
  CHECK_FALSE(streamlike::current_stream(-2, std::nothrow).has_value());
}

TEST_CASE("a device below -1 is refused by name") {
  const auto e = host_test::thrown<std::invalid_argument>([] { (void)streamlike::current_stream(-2); });
  REQUIRE(e.has_value());
  CHECK_MESSAGE(host_test::contains(e->what(), "current_stream: device must be"), e->what());
  CHECK_MESSAGE(host_test::contains(e->what(), "got -2"), e->what());
}

TEST_CASE("a device the process does not have is refused by name, with the range, before any provider is asked") {
  reset_fakes();
  const registered fake{table("fake", 50, &fake_framework::get, &fake_framework::set)};
  const auto read = host_test::thrown<std::invalid_argument>([] { (void)streamlike::current_stream(2); });
  REQUIRE(read.has_value());
  CHECK_MESSAGE(host_test::contains(read->what(), "current_stream: device 2 does not exist; expected 0..1"),
                read->what());
  const auto scope = host_test::thrown<std::invalid_argument>([] {
    const streamlike::scoped_current_stream guard{stream_view::legacy_default(), 3};
  });
  REQUIRE(scope.has_value());
  CHECK_MESSAGE(host_test::contains(scope->what(), "scoped_current_stream: device 3 does not exist; expected 0..1"),
                scope->what());
  CHECK(fake_framework::sets == 0);
  const auto conflicts =
      host_test::thrown<std::invalid_argument>([] { (void)streamlike::current_stream_conflicts(7); });
  REQUIRE(conflicts.has_value());
  CHECK_MESSAGE(host_test::contains(conflicts->what(), "device 7 does not exist"), conflicts->what());
}

TEST_CASE("a stream is made current on its own device, and refused for a device it does not belong to") {
  reset_fakes();
  const registered fake{table("fake", 50, &fake_framework::get, &fake_framework::set)};
  const stream_view on_1 = host_test::fake_cuda_stream(1);
  {
    const streamlike::scoped_current_stream guard{on_1}; // its own device, not the current one (0)
    CHECK(guard.device() == 1);
    CHECK(streamlike::current_stream(1) == on_1);
    CHECK(streamlike::current_stream(0) == stream_view{cudaStream_t{}});
    CHECK(fake_framework::current[1] == on_1.get());
    CHECK(fake_framework::current[0] == nullptr);
  }
  CHECK(fake_framework::current[1] == nullptr);
  const int sets_before = fake_framework::sets;
  const auto e = host_test::thrown<std::invalid_argument>([&] {
    const streamlike::scoped_current_stream guard{on_1, 0};
  });
  REQUIRE(e.has_value());
  CHECK_MESSAGE(host_test::contains(e->what(), "belongs to device 1, not device 0"), e->what());
  CHECK(fake_framework::sets == sets_before); // the refused scope set nothing
  {
    const streamlike::scoped_current_stream guard{stream_view::per_thread_default(), 1}; // a default stream: any device
    CHECK(fake_framework::current[1] == cudaStreamPerThread);
    CHECK(fake_framework::current[0] == nullptr);
  }
}

TEST_CASE("a provider with enter and leave is entered and left instead of get and set, exceptions too") {
  reset_fakes();
  auto p = table("token", 10, &token_framework::get, nullptr);
  p.enter = &token_framework::enter;
  p.leave = &token_framework::leave;
  const registered token{p};
  CHECK(streamlike::current_stream_providers()[0].can_set);
  token_framework::current = s3.get();
  try {
    const streamlike::scoped_current_stream outer{s1, device};
    CHECK(token_framework::current == s1.get());
    {
      const streamlike::scoped_current_stream inner{s2, device};
      CHECK(token_framework::current == s2.get());
      CHECK(streamlike::current_stream(device) == s2);
    }
    CHECK(token_framework::current == s1.get());
    throw std::runtime_error("leaves the scope");
  } catch (const std::runtime_error&) {
  }
  CHECK(token_framework::current == s3.get());
  CHECK(token_framework::enters == 2);
  CHECK(token_framework::leaves == 2);
}

TEST_CASE("a provider with only one of enter and leave is refused by name") {
  auto p = table("half", 10, &token_framework::get, nullptr);
  p.enter = &token_framework::enter;
  const auto e = host_test::thrown<std::invalid_argument>([&] { streamlike::register_current_stream_provider(p); });
  REQUIRE(e.has_value());
  CHECK_MESSAGE(host_test::contains(e->what(), "only one of enter and leave"), e->what());
}

TEST_CASE("inside a scope, a framework block opened inside it wins whatever it names, default streams too") {
  reset_fakes();
  const registered first{table("first", 10, &fake_framework::get, &fake_framework::set)};
  const registered second{table("second", 20, &other_framework::get, &other_framework::set)};
  const stream_view legacy = stream_view::legacy_default();
  const streamlike::scoped_current_stream outer{s1, device};
  CHECK(streamlike::current_stream(device) == s1);

  SUBCASE("the framework's block names its default stream (handle 0)") {
    fake_framework::current[device] = nullptr; // "with torch.cuda.stream(torch.cuda.default_stream()):"
    CHECK(streamlike::current_stream(device) == stream_view{cudaStream_t{}});
    const auto conflicts = streamlike::current_stream_conflicts(device);
    REQUIRE_FALSE(conflicts.empty());
    CHECK(conflicts.front().provider == "first");
  }
  SUBCASE("the lower-priority framework's block names the legacy default stream") {
    other_framework::current = legacy.get(); // "with cupy.cuda.Stream.null:"
    CHECK(streamlike::current_stream(device) == legacy);
  }
  SUBCASE("a scope opened inside the framework's block wins again, and leaving it gives the block back") {
    fake_framework::current[device] = nullptr;
    {
      const streamlike::scoped_current_stream inner{s2, device};
      CHECK(streamlike::current_stream(device) == s2);
    }
    CHECK(fake_framework::current[device] == nullptr);
    CHECK(streamlike::current_stream(device) == stream_view{cudaStream_t{}});
  }
  SUBCASE("a block on another device changes nothing here") {
    fake_framework::current[1] = nullptr;
    CHECK(streamlike::current_stream(device) == s1);
  }
  SUBCASE("another thread has no scope: the rule outside scopes") {
    stream_view seen{fake_handle(0xdead)};
    std::thread([&] { seen = streamlike::current_stream(device); }).join();
    CHECK(seen == stream_view{cudaStream_t{}});
  }
}

TEST_CASE("inside a scope, a read-only provider's stream from before the scope does not answer; a change does") {
  reset_fakes();
  const registered reader{table("read-only", 10, &fake_framework::get, nullptr)};
  fake_framework::current[device] = s3.get(); // named before the scope; the scope cannot set it
  CHECK(streamlike::current_stream(device) == s3);
  {
    const streamlike::scoped_current_stream scope{s1, device};
    CHECK(streamlike::current_stream(device) == s1);
    fake_framework::current[device] = s2.get(); // the framework's own block, inside the scope
    CHECK(streamlike::current_stream(device) == s2);
    fake_framework::current[device] = s3.get();
  }
  CHECK(streamlike::current_stream(device) == s3);
}

TEST_CASE("the provider table is versioned and sized: version 0, a newer version and a short table are refused") {
  reset_fakes();
  const auto refused = [](const streamlike_current_stream_provider& p, const std::string& says) {
    const auto e = host_test::thrown<std::invalid_argument>([&] { streamlike::register_current_stream_provider(p); });
    REQUIRE(e.has_value());
    CHECK_MESSAGE(host_test::contains(e->what(), says), e->what());
    CHECK(streamlike_current_stream_register(&p) == STREAMLIKE_CURRENT_STREAM_BAD_PROVIDER);
  };
  auto p = table("versioned", 10, &fake_framework::get, &fake_framework::set);
  auto unfilled = p;
  unfilled.major_version = 0;
  refused(unfilled, "provider major version 0 is no version");
  auto newer = p;
  newer.major_version = STREAMLIKE_CURRENT_STREAM_PROVIDER_MAJOR_VERSION + 1;
  refused(newer, "reads major version 1 (any minor)");
  auto shorter = p; // a registrant that knows fewer fields than its minor has
  shorter.struct_size = offsetof(streamlike_current_stream_provider, leave);
  refused(shorter, "struct_size is " + std::to_string(shorter.struct_size) + " bytes, shorter than the " +
                       std::to_string(sizeof(streamlike_current_stream_provider)) + " bytes of version 1.0");
  auto unsized = p;
  unsized.struct_size = 0;
  refused(unsized, "fill the table with STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT");
  // Only the versions and the size exist: nothing past them is read (AddressSanitizer would say so).
  const auto words = std::make_unique<std::uint32_t[]>(3);
  words[0] = STREAMLIKE_CURRENT_STREAM_PROVIDER_MAJOR_VERSION;
  words[1] = STREAMLIKE_CURRENT_STREAM_PROVIDER_MINOR_VERSION;
  words[2] = 3 * sizeof(std::uint32_t);
  CHECK(streamlike_current_stream_register(reinterpret_cast<const streamlike_current_stream_provider*>(words.get())) ==
        STREAMLIKE_CURRENT_STREAM_BAD_PROVIDER);
  CHECK(provider_names() == std::vector<std::string>{"streamlike"});
  struct longer_table { // a later minor appends: this streamlike reads the fields it knows
    streamlike_current_stream_provider known;
    void* appended;
  };
  longer_table newer_minor{p, &newer_minor};
  newer_minor.known.name = "newer-minor";
  newer_minor.known.minor_version = STREAMLIKE_CURRENT_STREAM_PROVIDER_MINOR_VERSION + 1;
  newer_minor.known.struct_size = sizeof(longer_table);
  const registered accepted_newer{newer_minor.known};
  const registered accepted{p}; // this major and minor
  CHECK(provider_names() == std::vector<std::string>{"newer-minor", "versioned", "streamlike"});
}

TEST_CASE("STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT fills the versions and the size, and nothing else") {
  const streamlike_current_stream_provider p = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
  CHECK(p.major_version == STREAMLIKE_CURRENT_STREAM_PROVIDER_MAJOR_VERSION);
  CHECK(p.minor_version == STREAMLIKE_CURRENT_STREAM_PROVIDER_MINOR_VERSION);
  CHECK(p.struct_size == sizeof(streamlike_current_stream_provider));
  CHECK(p.priority == 0);
  CHECK(p.name == nullptr);
  CHECK(p.context == nullptr);
  CHECK((p.get == nullptr && p.set == nullptr && p.enter == nullptr && p.leave == nullptr));
}

TEST_CASE("the C entry point reads the current stream as current_stream() does, and fails by its code") {
  reset_fakes();
  void* stream = nullptr;
  CHECK(streamlike_current_stream_get(device, &stream) == STREAMLIKE_CURRENT_STREAM_OK);
  CHECK(stream == nullptr);
  {
    const streamlike::scoped_current_stream guard{s1, device};
    CHECK(streamlike_current_stream_get(device, &stream) == STREAMLIKE_CURRENT_STREAM_OK);
    CHECK(stream == s1.get());
    stream = nullptr;
    CHECK(streamlike_current_stream_get(-1, &stream) == STREAMLIKE_CURRENT_STREAM_OK); // the current device: 0
    CHECK(stream == s1.get());
    void* untouched = s3.get();
    CHECK(streamlike_current_stream_get(host_test::fake_devices, &untouched) == STREAMLIKE_CURRENT_STREAM_FAILED);
    CHECK(streamlike_current_stream_get(-2, &untouched) == STREAMLIKE_CURRENT_STREAM_FAILED);
    CHECK(untouched == s3.get());
    CHECK(streamlike_current_stream_get(device, nullptr) == STREAMLIKE_CURRENT_STREAM_FAILED);
  }
}

TEST_CASE("the C table sets, reads and restores, and registers and unregisters, as the C functions do") {
  reset_fakes();
  const streamlike_current_stream_api* api = streamlike_current_stream_api_table();
  REQUIRE(api != nullptr);
  CHECK(api->major_version == STREAMLIKE_CURRENT_STREAM_API_MAJOR_VERSION);
  CHECK(api->minor_version == STREAMLIKE_CURRENT_STREAM_API_MINOR_VERSION);
  const auto p = table("through-table", 10, &fake_framework::get, &fake_framework::set);
  REQUIRE(api->register_provider(&p) == STREAMLIKE_CURRENT_STREAM_REGISTERED);
  fake_framework::current[device] = s3.get();
  void* token = nullptr;
  REQUIRE(api->set(device, s1.get(), &token) == STREAMLIKE_CURRENT_STREAM_OK);
  void* inside = nullptr;
  CHECK(api->get(device, &inside) == STREAMLIKE_CURRENT_STREAM_OK);
  CHECK(inside == s1.get());
  CHECK(fake_framework::current[device] == s1.get());
  void* nested = nullptr;
  REQUIRE(api->set(-1, s2.get(), &nested) == STREAMLIKE_CURRENT_STREAM_OK); // -1: the stream's own device
  CHECK(streamlike::current_stream(device) == s2);
  CHECK(api->restore(nested) == STREAMLIKE_CURRENT_STREAM_OK);
  void* on_device_1 = nullptr; // -1 for a stream of a device that is not current: the stream's device
  const stream_view of_1 = host_test::fake_cuda_stream(1);
  REQUIRE(api->set(-1, of_1.get(), &on_device_1) == STREAMLIKE_CURRENT_STREAM_OK);
  CHECK(streamlike::current_stream(1) == of_1);
  CHECK(fake_framework::current[1] == of_1.get());
  CHECK(streamlike::current_stream(device) == s1); // device 0, current, keeps the outer set
  CHECK(api->restore(on_device_1) == STREAMLIKE_CURRENT_STREAM_OK);
  CHECK(fake_framework::current[1] == nullptr);
  void* c_on_device_1 = nullptr; // and the C function the table names
  REQUIRE(streamlike_current_stream_set(-1, of_1.get(), &c_on_device_1) == STREAMLIKE_CURRENT_STREAM_OK);
  CHECK(streamlike::current_stream(1) == of_1);
  CHECK(streamlike_current_stream_restore(c_on_device_1) == STREAMLIKE_CURRENT_STREAM_OK);
  CHECK(api->restore(token) == STREAMLIKE_CURRENT_STREAM_OK);
  CHECK(fake_framework::current[device] == s3.get());
  void* refused = nullptr;
  CHECK(api->set(host_test::fake_devices, s1.get(), &refused) == STREAMLIKE_CURRENT_STREAM_FAILED);
  CHECK(api->set(1, s1.get(), &refused) == STREAMLIKE_CURRENT_STREAM_FAILED); // s1 is device 0's
  CHECK(api->set(device, s1.get(), nullptr) == STREAMLIKE_CURRENT_STREAM_FAILED);
  CHECK(refused == nullptr);
  CHECK(fake_framework::current[device] == s3.get());
  CHECK(api->restore(nullptr) == STREAMLIKE_CURRENT_STREAM_FAILED);
  CHECK(api->unregister_provider("through-table") == STREAMLIKE_CURRENT_STREAM_REGISTERED);
  CHECK(api->unregister_provider("through-table") == STREAMLIKE_CURRENT_STREAM_NOT_FOUND);
}
