// streamlike/owned_stream.hpp: shared_stream to and from the C ABI for owning streams, on fake
// handles whose structs count their releases (no GPU: from_owned_stream makes no CUDA call).
#include "host_support.hpp"

#include <streamlike/c/owned_stream.h>
#include <streamlike/error.hpp>
#include <streamlike/owned_stream.hpp>
#include <streamlike/shared_stream.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace {

// A producer of its own, as another library would write one: the struct is its manager's first
// member, and its deleter counts the releases.
struct fake_producer {
  std::atomic<int> released{0};
};

struct fake_reference {
  streamlike_owned_stream abi{};
  fake_producer* producer = nullptr;
};

void release_fake(streamlike_owned_stream* self) {
  auto* reference = static_cast<fake_reference*>(self->manager_ctx);
  reference->producer->released.fetch_add(1);
  delete reference;
}

// One owning reference to fake handle `address`, with the facts filled in unless `facts` is false.
streamlike_owned_stream* make_fake(fake_producer& producer, std::uintptr_t address, bool facts = true) {
  auto* reference = new fake_reference;
  reference->producer = &producer;
  streamlike_owned_stream& abi = reference->abi;
  abi.major_version = STREAMLIKE_OWNED_STREAM_MAJOR_VERSION;
  abi.minor_version = STREAMLIKE_OWNED_STREAM_MINOR_VERSION;
  abi.manager_ctx = reference;
  abi.deleter = &release_fake;
  abi.handle = reinterpret_cast<void*>(address); // NOLINT(performance-no-int-to-ptr)
  abi.device = -1;
  if (facts) {
    abi.flags = STREAMLIKE_OWNED_STREAM_HAS_FACTS | STREAMLIKE_OWNED_STREAM_NON_BLOCKING;
    abi.device = 3;
    abi.priority = -2;
    abi.stream_id = 77;
    abi.context_id = 9;
  }
  return &abi;
}

std::string refusal(streamlike_owned_stream* owned) {
  const auto e = host_test::thrown<streamlike::error>([&] { (void)streamlike::from_owned_stream(owned); });
  REQUIRE(e.has_value());
  return e->what();
}

} // namespace

TEST_CASE("from_owned_stream takes the struct's facts, and its last drop calls the deleter once") {
  fake_producer producer;
  streamlike::shared_stream s = streamlike::from_owned_stream(make_fake(producer, 0x5000));
  CHECK(s.get() == host_test::fake_handle(0x5000));
  CHECK(s.device() == 3); // cached: no CUDA call (there is no GPU here)
  CHECK(s.id() == 77);
  CHECK(s.flags() == cudaStreamNonBlocking);
  CHECK(s.priority() == -2);
  streamlike::shared_stream copy = s;
  s.reset();
  CHECK(producer.released == 0);
  copy.reset();
  CHECK(producer.released == 1);
}

TEST_CASE("the last drop may happen on any thread") {
  fake_producer producer;
  streamlike::shared_stream s = streamlike::from_owned_stream(make_fake(producer, 0x5000));
  std::thread([moved = std::move(s)]() mutable { moved.reset(); }).join();
  CHECK(producer.released == 1);
}

TEST_CASE("to_owned_stream holds one reference, released by its deleter") {
  fake_producer producer;
  streamlike::shared_stream s = streamlike::from_owned_stream(make_fake(producer, 0x6000));
  streamlike_owned_stream* out = streamlike::to_owned_stream(s);
  REQUIRE(out != nullptr);
  CHECK(out->major_version == STREAMLIKE_OWNED_STREAM_MAJOR_VERSION);
  CHECK(out->minor_version == STREAMLIKE_OWNED_STREAM_MINOR_VERSION);
  CHECK(out->handle == reinterpret_cast<void*>(0x6000)); // NOLINT(performance-no-int-to-ptr)
  CHECK(out->flags == (STREAMLIKE_OWNED_STREAM_HAS_FACTS | STREAMLIKE_OWNED_STREAM_NON_BLOCKING));
  CHECK(out->device == 3);
  CHECK(out->priority == -2);
  CHECK(out->stream_id == 77);
  for (std::uint64_t word : out->reserved) CHECK(word == 0);
  CHECK(s.use_count() == 2);
  s.reset();
  CHECK(producer.released == 0); // the struct still holds it
  out->deleter(out);
  CHECK(producer.released == 1);
}

TEST_CASE("a round trip shares the stream: from_owned_stream(to_owned_stream(s))") {
  fake_producer producer;
  streamlike::shared_stream s = streamlike::from_owned_stream(make_fake(producer, 0x6000));
  streamlike::shared_stream back = streamlike::from_owned_stream(streamlike::to_owned_stream(s));
  CHECK(back == s);
  CHECK(back.device() == 3);
  // The same block, not a second one around the struct: one count for both owners.
  CHECK(back.use_count() == 2);
  CHECK(s.use_count() == 2);
  s.reset();
  CHECK(producer.released == 0);
  back.reset();
  CHECK(producer.released == 1);
}

TEST_CASE("without HAS_FACTS nothing is read from the struct's fact fields, and nothing is exported as a fact") {
  fake_producer producer;
  streamlike::shared_stream s = streamlike::from_owned_stream(make_fake(producer, 0x7000, false));
  CHECK(s.get() == host_test::fake_handle(0x7000));
  streamlike_owned_stream* out = streamlike::to_owned_stream(s); // no query: still unknown
  CHECK(out->flags == 0);
  CHECK(out->device == -1);
  CHECK(out->stream_id == 0);
  out->deleter(out);
  if (!host_test::device_present()) { // the first query asks CUDA, which is not there
    host_test::check_no_device_error(host_test::thrown<streamlike::error>([&] { (void)s.device(); }),
                                     "cudaStreamGetDevice");
  }
  s.reset();
  CHECK(producer.released == 1);
}

TEST_CASE("a newer minor version is accepted; its reserved words are ignored") {
  fake_producer producer;
  streamlike_owned_stream* owned = make_fake(producer, 0x5000);
  owned->minor_version = 7;
  owned->reserved[0] = 0xffff;
  owned->flags |= std::uint64_t{1} << 40; // a bit a later minor may define
  streamlike::shared_stream s = streamlike::from_owned_stream(owned);
  CHECK(s.device() == 3);
  s.reset();
  CHECK(producer.released == 1);
}

TEST_CASE("the partition travels with HAS_PARTITION, and a 1.0 struct's zero words leave it unknown") {
  struct row {
    const char* name;
    bool flagged;
    std::uintptr_t green_context;
    std::uint32_t sm_count;
    std::uint64_t exported_flag;
    std::uintptr_t exported_green_context;
    std::uint32_t exported_sm_count;
  };
  for (const row r :
       {row{"a green context of 16 SMs", true, 0xabc0, 16, STREAMLIKE_OWNED_STREAM_HAS_PARTITION, 0xabc0, 16},
        row{"a regular context (its SM count ignored)", true, 0, 99, STREAMLIKE_OWNED_STREAM_HAS_PARTITION, 0, 0},
        row{"a 1.0 producer", false, 0, 0, 0, 0, 0}}) {
    CAPTURE(r.name);
    fake_producer producer;
    streamlike_owned_stream* owned = make_fake(producer, 0x5000);
    if (r.flagged)
      owned->flags |= STREAMLIKE_OWNED_STREAM_HAS_PARTITION;
    else
      owned->minor_version = 0;
    owned->green_context = reinterpret_cast<void*>(r.green_context); // NOLINT(performance-no-int-to-ptr)
    owned->sm_count = r.sm_count;
    streamlike::shared_stream s = streamlike::from_owned_stream(owned);
    streamlike_owned_stream* out = streamlike::to_owned_stream(s); // a second module takes it on
    CHECK((out->flags & STREAMLIKE_OWNED_STREAM_HAS_PARTITION) == r.exported_flag);
    CHECK(out->green_context == reinterpret_cast<void*>(r.exported_green_context)); // NOLINT(performance-no-int-to-ptr)
    CHECK(out->sm_count == r.exported_sm_count);
    CHECK(out->reserved32 == 0);
    for (std::uint64_t word : out->reserved) CHECK(word == 0);
    out->deleter(out);
    s.reset();
    CHECK(producer.released == 1);
  }
}

TEST_CASE("the default streams travel as their constants and flags, and come back immortal") {
  const streamlike::shared_stream legacy = streamlike::shared_stream::legacy_default();
  streamlike_owned_stream* out = streamlike::to_owned_stream(legacy);
  CHECK(out->handle == static_cast<void*>(cudaStreamLegacy));
  CHECK(out->flags == STREAMLIKE_OWNED_STREAM_LEGACY_DEFAULT);
  CHECK(out->device == -1);
  streamlike::shared_stream back = streamlike::from_owned_stream(out); // released at once
  CHECK(back == legacy);

  streamlike_owned_stream* per_thread = streamlike::to_owned_stream(streamlike::shared_stream::per_thread_default());
  CHECK(per_thread->handle == static_cast<void*>(cudaStreamPerThread));
  CHECK(per_thread->flags == STREAMLIKE_OWNED_STREAM_PER_THREAD_DEFAULT);
  CHECK(streamlike::from_owned_stream(per_thread) == streamlike::shared_stream::per_thread_default());

  fake_producer producer;
  streamlike_owned_stream* foreign = make_fake(producer, 0x1, false);
  foreign->flags = STREAMLIKE_OWNED_STREAM_LEGACY_DEFAULT;
  CHECK(streamlike::from_owned_stream(foreign).get() == cudaStreamLegacy);
  CHECK(producer.released == 1);
}

TEST_CASE("refusals name the problem and release the struct") {
  fake_producer producer;

  streamlike_owned_stream* major = make_fake(producer, 0x5000);
  major->major_version = 2;
  std::string what = refusal(major);
  CHECK_MESSAGE(host_test::contains(what, "unknown major version 2." +
                                              std::to_string(STREAMLIKE_OWNED_STREAM_MINOR_VERSION) +
                                              "; expected major version 1"),
                what);
  CHECK(producer.released == 1);

  streamlike_owned_stream* null_handle = make_fake(producer, 0);
  what = refusal(null_handle);
  CHECK_MESSAGE(host_test::contains(what, "the handle is null"), what);
  CHECK(producer.released == 2);

  streamlike_owned_stream* contradiction = make_fake(producer, 0x5000);
  contradiction->flags = STREAMLIKE_OWNED_STREAM_LEGACY_DEFAULT;
  what = refusal(contradiction);
  CHECK_MESSAGE(host_test::contains(what, "contradict handle 0x5000"), what);
  CHECK(producer.released == 3);

  streamlike_owned_stream* unflagged = make_fake(producer, 0x2);
  what = refusal(unflagged); // CU_STREAM_PER_THREAD without its flag
  CHECK_MESSAGE(host_test::contains(what, "contradict handle 0x2"), what);
  CHECK(producer.released == 4);

  what = refusal(nullptr);
  CHECK_MESSAGE(host_test::contains(what, "pointer is null"), what);

  streamlike_owned_stream* no_deleter = make_fake(producer, 0x5000);
  no_deleter->deleter = nullptr;
  what = refusal(no_deleter);
  CHECK_MESSAGE(host_test::contains(what, "deleter is null"), what);
  delete static_cast<fake_reference*>(no_deleter->manager_ctx); // nobody else can
  CHECK(producer.released == 4);
}

TEST_CASE("to_owned_stream refuses an empty shared_stream") {
  const auto e = host_test::thrown<streamlike::error>([] { (void)streamlike::to_owned_stream({}); });
  REQUIRE(e.has_value());
  CHECK_MESSAGE(host_test::contains(e->what(), "to_owned_stream"), e->what());
  CHECK_MESSAGE(host_test::contains(e->what(), "empty"), e->what());
}

TEST_CASE("the ABI's edges: only major version 1, and the default-stream handles only with their flags") {
  fake_producer producer;
  int released = 0;
  const auto refused_with = [&](streamlike_owned_stream* owned, const std::string& expected) {
    const std::string what = refusal(owned);
    CHECK_MESSAGE(host_test::contains(what, expected), what);
    CHECK(producer.released == ++released); // every refusal releases the struct, once
  };

  streamlike_owned_stream* major_zero = make_fake(producer, 0x5000);
  major_zero->major_version = 0; // no such major: below the first
  refused_with(major_zero, "unknown major version 0." + std::to_string(STREAMLIKE_OWNED_STREAM_MINOR_VERSION) +
                               "; expected major version 1");

  streamlike_owned_stream* major_largest = make_fake(producer, 0x5000);
  major_largest->major_version = UINT32_MAX;
  refused_with(major_largest, "unknown major version 4294967295." +
                                  std::to_string(STREAMLIKE_OWNED_STREAM_MINOR_VERSION) + "; expected major version 1");

  streamlike_owned_stream* legacy_unflagged = make_fake(producer, 0x1); // CU_STREAM_LEGACY without its flag
  refused_with(legacy_unflagged, "contradict handle 0x1");

  streamlike_owned_stream* per_thread_elsewhere = make_fake(producer, 0x5000, false);
  per_thread_elsewhere->flags = STREAMLIKE_OWNED_STREAM_PER_THREAD_DEFAULT; // with another handle
  refused_with(per_thread_elsewhere, "contradict handle 0x5000");

  streamlike_owned_stream* both_flags = make_fake(producer, 0x1, false);
  both_flags->flags = STREAMLIKE_OWNED_STREAM_LEGACY_DEFAULT | STREAMLIKE_OWNED_STREAM_PER_THREAD_DEFAULT;
  refused_with(both_flags, "contradict handle 0x1");

  streamlike_owned_stream* legacy_flag_per_thread_handle = make_fake(producer, 0x2, false);
  legacy_flag_per_thread_handle->flags = STREAMLIKE_OWNED_STREAM_LEGACY_DEFAULT;
  refused_with(legacy_flag_per_thread_handle, "contradict handle 0x2");

  // The accepted neighbours of those edges: the current major with any minor, each default
  // stream with its own flag.
  streamlike_owned_stream* current = make_fake(producer, 0x5000);
  current->minor_version = UINT32_MAX;
  CHECK(streamlike::from_owned_stream(current).get() == reinterpret_cast<cudaStream_t>(0x5000));
  CHECK(producer.released == ++released);
}
