// Tests for streamlike/shared_stream.hpp (src/shared_stream.cpp, src/stream_lifecycle.cpp) that
// need no GPU: layout, the empty state, copy/move/swap/reset, equality and hashing, refcounting
// through keep_alive on a default-stream view (no CUDA call: default streams cache no facts),
// also from many threads, the immortal default streams, and the errors create() and adopt()
// give without a device.
#include <streamlike/export_stream.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_exporter.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_owner.hpp>
#include <streamlike/unique_stream.hpp>

#include "host_support.hpp"
#include "owner_operation_checks.hpp"

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <latch>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

using streamlike::shared_stream;
using streamlike::stream_view;
using host_test::contains;
using host_test::thrown;
using host_test::device_present;
using host_test::check_no_device_error;

namespace {

// A keep-alive object that counts how often a live instance is destroyed (moved-from shells
// do not count), so "released exactly once" is observable.
class destruction_counter {
public:
  explicit destruction_counter(std::atomic<int>& destroyed) noexcept : destroyed_(&destroyed) {}
  destruction_counter(destruction_counter&& other) noexcept : destroyed_(std::exchange(other.destroyed_, nullptr)) {}
  destruction_counter& operator=(destruction_counter&&) = delete;
  ~destruction_counter() {
    if (destroyed_ != nullptr) destroyed_->fetch_add(1);
  }

private:
  std::atomic<int>* destroyed_;
};

// A shared_stream that keeps `object` alive on the per-thread default stream: no GPU needed.
template <class T>
shared_stream holding(T object) {
  return shared_stream::keep_alive(stream_view::per_thread_default(), std::move(object));
}

} // namespace

TEST_CASE("shared_stream is two pointers, like std::shared_ptr") {
  static_assert(sizeof(shared_stream) == 2 * sizeof(void*));
  static_assert(sizeof(shared_stream) == sizeof(std::shared_ptr<int>));
}

TEST_CASE("shared_stream: the noexcept promises") {
  static_assert(std::is_nothrow_default_constructible_v<shared_stream>);
  static_assert(std::is_nothrow_copy_constructible_v<shared_stream>);
  static_assert(std::is_nothrow_move_constructible_v<shared_stream>);
  static_assert(std::is_nothrow_copy_assignable_v<shared_stream>);
  static_assert(std::is_nothrow_move_assignable_v<shared_stream>);
  static_assert(std::is_nothrow_destructible_v<shared_stream>);
  static_assert(std::is_nothrow_swappable_v<shared_stream>);
  const shared_stream s;
  shared_stream t;
  static_assert(noexcept(static_cast<bool>(s)));
  static_assert(noexcept(s.use_count()));
  static_assert(noexcept(t.reset()));
  static_assert(noexcept(t.swap(t)));
  static_assert(noexcept(s == s));
  static_assert(noexcept(std::hash<shared_stream>{}(s)));
  static_assert(noexcept(shared_stream::legacy_default()));
  static_assert(noexcept(shared_stream::per_thread_default()));
  // The view of an empty shared_stream throws, so it cannot be noexcept; neither is get_stream.
  static_assert(!noexcept(s.view()));
  static_assert(!streamlike::nothrow_stream_like<const shared_stream&>);
  // The default constructor is usable in constant expressions (a constinit global needs no init order).
  static constinit shared_stream at_compile_time{};
  CHECK_FALSE(at_compile_time);
}

TEST_CASE("shared_stream concepts: stream_like and stream_exporter as an lvalue, never a stream_owner") {
  static_assert(streamlike::stream_like<shared_stream&>);
  static_assert(streamlike::stream_like<const shared_stream&>);
  // A temporary may hold the last reference: its view would dangle.
  static_assert(!streamlike::stream_like<shared_stream>);
  static_assert(!streamlike::stream_like<shared_stream&&>);
  static_assert(!streamlike::stream_like<const shared_stream>);
  static_assert(streamlike::stream_exporter<shared_stream&>);
  static_assert(streamlike::stream_exporter<const shared_stream&>);
  static_assert(streamlike::stream_exporter<shared_stream>); // moved
  // It shares its stream; destroying one copy does not destroy the stream.
  static_assert(!streamlike::stream_owner<shared_stream>);
  static_assert(!streamlike::enable_stream_owner<shared_stream>);
}

TEST_CASE("a default-constructed shared_stream is empty and every query throws saying so") {
  const shared_stream s;
  CHECK_FALSE(s);
  CHECK(s.use_count() == 0);

  const auto check_empty_error = [](const std::optional<streamlike::error>& e, const char* query) {
    REQUIRE_MESSAGE(e.has_value(), query << " did not throw streamlike::error");
    const std::string what = e->what();
    CHECK_MESSAGE(contains(what, "empty"), what);
    CHECK_MESSAGE(contains(what, "shared_stream"), what);
    CHECK_MESSAGE(contains(what, query), what);
  };
  check_empty_error(thrown<streamlike::error>([&] { (void)s.view(); }), "view");
  check_empty_error(thrown<streamlike::error>([&] { (void)s.get(); }), "get");
  check_empty_error(thrown<streamlike::error>([&] { (void)s.device(); }), "device");
  check_empty_error(thrown<streamlike::error>([&] { (void)s.id(); }), "id");
  check_empty_error(thrown<streamlike::error>([&] { (void)s.flags(); }), "flags");
  check_empty_error(thrown<streamlike::error>([&] { (void)s.priority(); }), "priority");
  // get_stream reaches the same check through the member route.
  check_empty_error(thrown<streamlike::error>([&] { (void)streamlike::get_stream(s); }), "view");
}

TEST_CASE("a moved-from shared_stream is empty and throws like a default-constructed one") {
  shared_stream source = holding(0);
  shared_stream target = std::move(source);
  CHECK_FALSE(source); // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
  CHECK(source.use_count() == 0);
  CHECK(source == shared_stream{});
  CHECK_THROWS_AS((void)source.view(), streamlike::error);
  CHECK(target);
  CHECK(target.use_count() == 1);
  CHECK(target.view() == stream_view::per_thread_default());

  shared_stream assigned;
  assigned = std::move(target);
  CHECK_FALSE(target); // NOLINT(bugprone-use-after-move)
  CHECK(assigned.use_count() == 1);
}

TEST_CASE("keep_alive views the given stream and get_stream on an lvalue returns that view") {
  shared_stream s = holding(42);
  CHECK(s);
  CHECK(s.view() == stream_view::per_thread_default());
  CHECK(s.get() == cudaStreamPerThread);
  CHECK(streamlike::get_stream(s) == stream_view::per_thread_default());
  const shared_stream& cs = s;
  CHECK(streamlike::get_stream(cs) == stream_view::per_thread_default());
  CHECK(streamlike::get_stream(s) == s.view());

  const shared_stream legacy = shared_stream::keep_alive(stream_view::legacy_default(), 1);
  CHECK(legacy.get() == cudaStreamLegacy);
}

TEST_CASE("copying adds one reference and copies compare equal; dropping a copy removes it") {
  const shared_stream a = holding(0);
  CHECK(a.use_count() == 1);
  {
    const shared_stream b = a; // NOLINT(performance-unnecessary-copy-initialization): the copy is tested
    CHECK(a.use_count() == 2);
    CHECK(b.use_count() == 2);
    CHECK(a == b);
    CHECK(b.view() == a.view());
    std::vector<shared_stream> many(100, a);
    CHECK(a.use_count() == 102);
  }
  CHECK(a.use_count() == 1);
}

TEST_CASE("copy and move assignment, including self-assignment") {
  std::atomic<int> first_destroyed{0};
  std::atomic<int> second_destroyed{0};
  shared_stream first = holding(destruction_counter(first_destroyed));
  shared_stream second =
      shared_stream::keep_alive(stream_view::legacy_default(), destruction_counter(second_destroyed));

  SUBCASE("copy assignment releases the target's old stream and shares the source's") {
    second = first;
    CHECK(second_destroyed == 1); // second held the last reference to its object
    CHECK(first_destroyed == 0);
    CHECK(first.use_count() == 2);
    CHECK(second == first);
  }
  SUBCASE("move assignment releases the target's old stream and empties the source") {
    second = std::move(first);
    CHECK(second_destroyed == 1);
    CHECK(first_destroyed == 0);
    CHECK_FALSE(first); // NOLINT(bugprone-use-after-move)
    CHECK(second.use_count() == 1);
    CHECK(second.view() == stream_view::per_thread_default());
  }
  SUBCASE("copy self-assignment changes nothing") {
    shared_stream& alias = first;
    first = alias;
    CHECK(first);
    CHECK(first.use_count() == 1);
    CHECK(first_destroyed == 0);
  }
  SUBCASE("move self-assignment keeps the stream (and does not release it)") {
    shared_stream& alias = first;
    first = std::move(alias);
    CHECK(first);
    CHECK(first.use_count() == 1);
    CHECK(first.view() == stream_view::per_thread_default());
    CHECK(first_destroyed == 0);
  }
  SUBCASE("assigning an empty shared_stream releases and empties the target") {
    first = shared_stream{};
    CHECK_FALSE(first);
    CHECK(first_destroyed == 1);
  }
  first.reset();
  second.reset();
  // Whatever the path, each object was released exactly once.
  CHECK(first_destroyed == 1);
  CHECK(second_destroyed == 1);
}

TEST_CASE("swap exchanges streams without touching the counts; reset drops one reference") {
  shared_stream a = holding(0);
  const shared_stream a_copy = a;
  shared_stream b = shared_stream::keep_alive(stream_view::legacy_default(), 0);

  a.swap(b);
  CHECK(a.view() == stream_view::legacy_default());
  CHECK(b.view() == stream_view::per_thread_default());
  CHECK(b == a_copy);
  CHECK(b.use_count() == 2);
  CHECK(a.use_count() == 1);

  using std::swap;
  swap(a, b); // the hidden friend, found by ADL
  CHECK(a == a_copy);
  CHECK(b.view() == stream_view::legacy_default());

  a.reset();
  CHECK_FALSE(a);
  CHECK(a.use_count() == 0);
  CHECK(a_copy.use_count() == 1);
  a.reset(); // reset of an empty shared_stream is harmless
  CHECK_FALSE(a);

  shared_stream empty;
  swap(empty, b);
  CHECK(empty.view() == stream_view::legacy_default());
  CHECK_FALSE(b);
}

TEST_CASE("== compares the viewed handle and emptiness") {
  const shared_stream a = holding(1);
  const shared_stream b = holding(2); // another block, same handle
  const shared_stream legacy = shared_stream::keep_alive(stream_view::legacy_default(), 3);
  CHECK(a == a);
  CHECK(a == b); // documented: equal when they view the same stream handle
  CHECK(a != legacy);
  CHECK(shared_stream{} == shared_stream{});
  CHECK(a != shared_stream{});
  // A non-empty shared_stream of the handle 0 is not the empty one, though both hold a null handle.
  const shared_stream null_handle = shared_stream::keep_alive(stream_view{cudaStream_t{}}, 4);
  CHECK(null_handle);
  CHECK(null_handle != shared_stream{});
  CHECK(shared_stream{} != null_handle);
}

TEST_CASE("std::hash<shared_stream>: equal streams hash equal, and hashing an empty one does not throw") {
  const std::hash<shared_stream> hash;
  const shared_stream a = holding(1);
  const shared_stream a_copy = a;
  const shared_stream b = holding(2);
  CHECK(hash(a) == hash(a_copy));
  CHECK(hash(a) == hash(b)); // a == b
  CHECK(hash(a) == std::hash<stream_view>{}(a.view()));
  CHECK_NOTHROW((void)hash(shared_stream{}));
  CHECK(hash(shared_stream{}) == hash(shared_stream{}));

  std::unordered_set<shared_stream> set{a, a_copy, b, shared_stream::keep_alive(stream_view::legacy_default(), 0)};
  CHECK(set.size() == 2);
  CHECK(set.count(a) == 1);
}

TEST_CASE("keep_alive holds the object until the last copy drops") {
  auto object = std::make_shared<int>(7);
  CHECK(object.use_count() == 1);
  shared_stream s = holding(object);
  CHECK(object.use_count() == 2); // one copy, held by the block
  shared_stream t = s;
  CHECK(object.use_count() == 2); // copies share the block, not the object
  s.reset();
  CHECK(object.use_count() == 2); // t still holds it
  t.reset();
  CHECK(object.use_count() == 1); // the last drop released it
}

TEST_CASE("keep_alive moves the object in: a moved shared_ptr is held alone") {
  auto object = std::make_shared<int>(7);
  const std::weak_ptr<int> watch = object;
  shared_stream s = holding(std::move(object));
  CHECK(watch.use_count() == 1);
  s.reset();
  CHECK(watch.expired());
}

TEST_CASE("keep_alive accepts a move-only object and destroys it exactly once") {
  std::atomic<int> destroyed{0};
  {
    shared_stream s = holding(destruction_counter(destroyed));
    const shared_stream copy = s;
    shared_stream moved = std::move(s);
    CHECK(destroyed == 0);
    moved.reset();
    CHECK(destroyed == 0); // `copy` is still alive
  }
  CHECK(destroyed == 1);

  // std::unique_ptr: move-only and common.
  auto owned = std::make_unique<int>(3);
  int* const address = owned.get();
  const shared_stream u = holding(std::move(owned));
  CHECK(owned == nullptr);
  CHECK(*address == 3); // still alive while u lives
}

TEST_CASE("the last copy dropped during stack unwinding releases the keep-alive once, without terminating") {
  // Destructors never throw: a shared_stream destroyed while an exception propagates must not
  // call std::terminate, and the exception arrives unchanged.
  std::atomic<int> destroyed{0};
  const auto unwinds_through_the_last_copy = [&] {
    const shared_stream s = holding(destruction_counter(destroyed));
    const shared_stream copy = s;
    throw std::runtime_error("thrown while two shared_streams are alive");
  };
  const auto e = thrown<std::runtime_error>(unwinds_through_the_last_copy);
  REQUIRE(e.has_value());
  CHECK(std::string(e->what()) == "thrown while two shared_streams are alive");
  CHECK(destroyed == 1);
}

TEST_CASE("a shared_stream keeps the stream's owner alive after the original reference is gone") {
  // With a raw owner, destroying it while a stream_view still points at the stream is undefined
  // behaviour (the view cannot know). A shared_stream handed to the consumer instead keeps the
  // owner alive for as long as any copy lives: here the "owner" counts its own destruction.
  std::atomic<int> destroyed{0};
  std::optional<shared_stream> producer_side{holding(destruction_counter(destroyed))};
  const shared_stream consumer_side = *producer_side; // what an asynchronous consumer keeps
  const stream_view view_in_use = consumer_side.view();
  producer_side.reset(); // the producer is done with it
  CHECK(destroyed == 0);
  CHECK(consumer_side.view() == view_in_use);
  CHECK(consumer_side.use_count() == 1);
}

TEST_CASE("8 threads copying and dropping one shared_stream 100k times leave the count where it began") {
  auto object = std::make_shared<int>(0);
  const shared_stream s = holding(object);
  const long before = s.use_count();
  constexpr int threads = 8;
  constexpr int rounds = 100'000;
  std::latch start(threads);
  std::atomic<bool> object_alive_throughout{true};
  {
    std::vector<std::jthread> workers;
    for (int i = 0; i < threads; ++i) {
      workers.emplace_back([&] {
        start.arrive_and_wait(); // all at once, to contend on the count
        for (int r = 0; r < rounds; ++r) {
          const shared_stream copy = s; // NOLINT(performance-unnecessary-copy-initialization)
          if (!copy || copy.use_count() < 2) object_alive_throughout = false;
        }
      });
    }
  }
  CHECK(object_alive_throughout);
  CHECK(s.use_count() == before);
  CHECK(object.use_count() == 2); // still held once
}

TEST_CASE("the last of many threads to drop a shared_stream releases its object, exactly once") {
  std::atomic<int> destroyed{0};
  auto marker = std::make_shared<int>(0);
  const std::weak_ptr<int> watch = marker;
  shared_stream s = holding(std::make_pair(destruction_counter(destroyed), std::move(marker)));
  constexpr int threads = 8;
  constexpr int rounds = 100'000;
  std::vector<shared_stream> copies(threads, s);
  CHECK(s.use_count() == threads + 1);
  s.reset(); // main's reference goes first: the threads' copies must keep the object alive
  CHECK_FALSE(watch.expired());

  std::latch start(threads);
  std::atomic<int> early_releases{0};
  {
    std::vector<std::jthread> workers;
    for (int i = 0; i < threads; ++i) {
      workers.emplace_back([&, mine = std::move(copies[static_cast<std::size_t>(i)])]() mutable {
        start.arrive_and_wait();
        for (int r = 0; r < rounds; ++r) {
          shared_stream copy = mine;
          shared_stream moved = std::move(copy);
        }
        if (watch.expired() || destroyed != 0) early_releases.fetch_add(1);
        mine.reset(); // one of these is the last reference
      });
    }
  }
  CHECK(early_releases == 0);
  CHECK(watch.expired());
  CHECK(destroyed == 1);
}

TEST_CASE("legacy_default() and per_thread_default(): immortal, and copies only count") {
  const shared_stream legacy = shared_stream::legacy_default();
  const shared_stream per_thread = shared_stream::per_thread_default();
  CHECK(legacy);
  CHECK(per_thread);
  CHECK(legacy.view() == stream_view::legacy_default());
  CHECK(legacy.get() == cudaStreamLegacy);
  CHECK(per_thread.view() == stream_view::per_thread_default());
  CHECK(per_thread.get() == cudaStreamPerThread);
  CHECK(legacy != per_thread);
  CHECK(shared_stream::legacy_default() == legacy); // every call shares one block
  CHECK(streamlike::get_stream(legacy) == cudaStreamLegacy);

  const long before = legacy.use_count();
  CHECK(before >= 2); // the function's own static holds one
  {
    std::vector<shared_stream> copies(1000, legacy);
    CHECK(legacy.use_count() == before + 1000);
  }
  CHECK(legacy.use_count() == before);
  // Dropping every copy we made destroyed nothing: it is still the same live stream.
  shared_stream again = shared_stream::legacy_default();
  CHECK(again == legacy);
  CHECK(again.use_count() == before + 1);
}

TEST_CASE("default streams cache no facts: their queries ask CUDA (and fail without a device)") {
  if (device_present()) {
    MESSAGE("a CUDA device is present: skipping the no-device checks");
    return;
  }
  const shared_stream per_thread = shared_stream::per_thread_default();
  check_no_device_error(thrown<streamlike::error>([&] { (void)per_thread.device(); }), "cudaStreamGetDevice");
  CHECK_THROWS_AS((void)holding(0).priority(), streamlike::error);
}

TEST_CASE("create() without a device throws streamlike::error naming the operation and the CUDA error") {
  if (device_present()) {
    MESSAGE("a CUDA device is present: skipping the no-device checks");
    return;
  }
  for (const streamlike::stream_options& options :
       {streamlike::stream_options{}, streamlike::stream_options{.device = 0, .priority = 0, .non_blocking = false}}) {
    check_no_device_error(thrown<streamlike::error>([&] { (void)shared_stream::create(options); }),
                          "shared_stream::create");
  }
  // The default argument: create() with no options at all.
  CHECK_THROWS_AS((void)shared_stream::create(), streamlike::error);
}

TEST_CASE("adopt() refuses the default streams with std::invalid_argument naming the problem") {
  for (const cudaStream_t handle : {cudaStream_t{}, cudaStreamLegacy, cudaStreamPerThread}) {
    const auto e = thrown<std::invalid_argument>([&] { (void)shared_stream::adopt(handle); });
    REQUIRE(e.has_value());
    const std::string what = e->what();
    CHECK_MESSAGE(contains(what, "shared_stream::adopt"), what);
    CHECK_MESSAGE(contains(what, "default stream"), what);
    CHECK_MESSAGE(contains(what, "cannot be owned"), what);
  }
  CHECK_THROWS_AS((void)shared_stream::adopt(nullptr), std::invalid_argument);
}

TEST_CASE("adopt() of a handle it cannot query throws streamlike::error (without a device)") {
  if (device_present()) {
    // A fake handle must never reach a real driver.
    MESSAGE("a CUDA device is present: skipping the no-device checks");
    return;
  }
  // Without a driver the facts cannot be read: adopt fails before it owns anything.
  const auto fake = reinterpret_cast<cudaStream_t>(0x1234); // NOLINT(performance-no-int-to-ptr)
  check_no_device_error(thrown<streamlike::error>([&] { (void)shared_stream::adopt(fake); }),
                        "shared_stream::adopt: cudaStreamGetDevice");
}

TEST_CASE("a keep-alive's first query without a device names that query and the CUDA call") {
  if (device_present()) {
    MESSAGE("a CUDA device is present: skipping the no-device checks");
    return;
  }
  // A keep-alive asks its facts on its first query; a failure names the query (what the Python
  // package's .device, .id, .priority and .flags report), and the next query asks again.
  const auto fake = reinterpret_cast<cudaStream_t>(0x1234); // NOLINT(performance-no-int-to-ptr)
  const shared_stream kept = shared_stream::keep_alive(fake, 0);
  check_no_device_error(thrown<streamlike::error>([&] { (void)kept.device(); }),
                        "shared_stream::device: cudaStreamGetDevice");
  check_no_device_error(thrown<streamlike::error>([&] { (void)kept.id(); }), "shared_stream::id: cudaStreamGetDevice");
  check_no_device_error(thrown<streamlike::error>([&] { (void)kept.priority(); }),
                        "shared_stream::priority: cudaStreamGetDevice");
  check_no_device_error(thrown<streamlike::error>([&] { (void)kept.flags(); }),
                        "shared_stream::flags: cudaStreamGetDevice");
}

// --- The stream's operations on the owner (owner_operation_checks.hpp: one body for both owners) --

TEST_CASE("shared_stream's operations: signatures, noexcept and what wait accepts") {
  host_test::check_operation_signatures<shared_stream, streamlike::unique_stream>();
}

TEST_CASE("shared_stream's operations on an empty shared_stream throw the empty error naming the operation") {
  const shared_stream s;
  host_test::check_empty_operations(s, "shared_stream");
  // An empty producer is refused by its own get_stream, naming it.
  const shared_stream consumer = holding(0);
  host_test::check_empty_error(thrown<streamlike::error>([&] { consumer.wait(s); }), "shared_stream::view",
                               "shared_stream");
  // Waiting on its own stream is a no-op: no CUDA call, nothing thrown.
  consumer.wait(consumer);
  consumer.wait(stream_view::per_thread_default());
}

TEST_CASE("shared_stream's operations without a device name the shared_stream's operation and the CUDA call") {
  if (device_present()) {
    MESSAGE("a CUDA device is present: skipping the no-device checks");
    return;
  }
  // A default stream caches no device: record asks the stream for it.
  host_test::check_operations_without_device(shared_stream::per_thread_default(), "shared_stream");
}

// --- Conversions to the view types -----------------------------------------------------------------

TEST_CASE(
    "shared_stream converts to stream_view and cuda::stream_ref on lvalues only, to cudaStream_t only explicitly") {
  host_test::check_view_conversions<shared_stream>();
  host_test::check_converts_to(holding(0), cudaStreamPerThread);
}

TEST_CASE("converting an empty shared_stream throws the empty error of view()") {
  host_test::check_empty_conversions(shared_stream{}, "shared_stream");
}

TEST_CASE("a shared_stream compares equal to views of its stream, either way round; an empty one to none") {
  const shared_stream s = holding(0);
  const stream_view per_thread = stream_view::per_thread_default();
  const stream_view legacy = stream_view::legacy_default();
  CHECK(s == per_thread);
  CHECK(per_thread == s);
  CHECK(s != legacy);
  CHECK(legacy != s);
  CHECK(s == cuda::stream_ref{cudaStreamPerThread});
  CHECK(cuda::stream_ref{cudaStreamPerThread} == s);
  CHECK(s == cudaStreamPerThread);
  CHECK(cudaStreamLegacy != s);
  const shared_stream empty;
  CHECK(empty != stream_view{cudaStream_t{}}); // empty views nothing, not the handle 0
  CHECK(empty != cudaStream_t{});
  static_assert(noexcept(s == per_thread));
}

TEST_CASE("shared_stream: wait refuses 0 and nullptr; the member get_stream() refuses rvalues") {
  host_test::check_compile_refusals<shared_stream>();
}
