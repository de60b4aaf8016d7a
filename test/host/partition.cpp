// Tests for streamlike/partition.hpp without a GPU, against the fake CUDA (test/fake_cuda), which
// models an H200's green contexts: 132 SMs per device split in multiples of 8, green contexts with
// their own context, streams that remember theirs. What is checked: making a partition (and each
// refusal), adopting and borrowing a green context, streams made on a partition report it,
// plain and default streams report not green, the last stream keeps the green context alive,
// stream_pool::get_for stays in its caller's partition, and nothing here invalidates a capture.
#include "../fake_cuda/fake_cuda.h"
#include "host_support.hpp"

#include <streamlike/c/owned_stream.h>
#include <streamlike/current_stream.hpp>
#include <streamlike/event.hpp>
#include <streamlike/owned_stream.hpp>
#include <streamlike/partition.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_pool.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using host_test::contains;
using host_test::thrown;
using streamlike::partition;
using streamlike::partition_of;
using streamlike::shared_stream;
using streamlike::stream_pool;
using streamlike::unique_stream;

namespace {

// The fake's driver function `name`, as the library fetches it.
template <class Fn>
Fn driver_function(const char* name) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult status{};
  REQUIRE(cudaGetDriverEntryPointByVersion(name, &address, 13000, cudaEnableDefault, &status) == cudaSuccess);
  REQUIRE(address != nullptr);
  return reinterpret_cast<Fn>(address);
}

// A green context of `sms` SMs made with the driver's calls, as a framework (torch) makes one.
CUgreenCtx raw_green_context(unsigned int sms) {
  CUdevResource all{};
  CUdevResource group{};
  unsigned int groups = 1;
  CUdevResourceDesc desc = nullptr;
  CUgreenCtx green = nullptr;
  REQUIRE(driver_function<decltype(&cuDeviceGetDevResource)>("cuDeviceGetDevResource")(0, &all,
                                                                                       CU_DEV_RESOURCE_TYPE_SM) == 0);
  REQUIRE(driver_function<decltype(&cuDevSmResourceSplitByCount)>("cuDevSmResourceSplitByCount")(&group, &groups, &all,
                                                                                                 nullptr, 0, sms) == 0);
  REQUIRE(driver_function<decltype(&cuDevResourceGenerateDesc)>("cuDevResourceGenerateDesc")(&desc, &group, 1) == 0);
  REQUIRE(driver_function<decltype(&cuGreenCtxCreate)>("cuGreenCtxCreate")(&green, desc, 0,
                                                                           CU_GREEN_CTX_DEFAULT_STREAM) == 0);
  return green;
}

cudaStream_t raw_green_stream(CUgreenCtx green) {
  CUstream stream = nullptr;
  REQUIRE(driver_function<decltype(&cuGreenCtxStreamCreate)>("cuGreenCtxStreamCreate")(&stream, green,
                                                                                       CU_STREAM_NON_BLOCKING, 0) == 0);
  return stream;
}

void destroy_raw(cudaStream_t stream, CUgreenCtx green) {
  CHECK(cudaStreamDestroy(stream) == cudaSuccess);
  CHECK(driver_function<decltype(&cuGreenCtxDestroy)>("cuGreenCtxDestroy")(green) == 0);
}

struct fake_setup {
  fake_setup() {
    REQUIRE(fake_cuda_present() == 1);
    fake_cuda_set_devices(2);
    fake_cuda_set_sm_count(132);
    (void)cudaSetDevice(0);
  }
};

} // namespace

TEST_CASE_FIXTURE(fake_setup, "partition::create: the SM count the driver gives, rounded up to its granularity") {
  struct row {
    int device;
    unsigned int asked;
    unsigned int got;
  };
  for (const row r : {row{0, 1, 8}, row{0, 8, 8}, row{0, 10, 16}, row{0, 16, 16}, row{1, 16, 16}, row{0, 128, 128}}) {
    CAPTURE(r.device);
    CAPTURE(r.asked);
    const long before = fake_cuda_live_green_contexts();
    {
      const partition p = partition::create(r.device, r.asked);
      CHECK(static_cast<bool>(p));
      CHECK(p.device() == r.device);
      CHECK(p.sm_count() == r.got);
      CHECK(p.id() != 0);
      CHECK(p.owned());
      CHECK(p.green_context() != nullptr);
      CHECK(p.use_count() == 1);
      CHECK(fake_cuda_live_green_contexts() == before + 1);
      const partition copy = p; // copies share the green context
      CHECK(copy == p);
      CHECK(p.use_count() == 2);
    }
    CHECK(fake_cuda_live_green_contexts() == before); // the last copy destroyed it
  }
}

TEST_CASE_FIXTURE(fake_setup, "partition::create refuses bad input by name, before making anything") {
  struct row {
    int device;
    unsigned int sm_count;
    bool invalid_argument; // else streamlike::error
    std::string names;
  };
  for (const row& r : {
           row{0, 0, true, "sm_count 0"},
           row{0, 133, true, "sm_count 133 is more than device 0's 132 SMs; expected 1..132"},
           row{2, 16, true, "device 2 does not exist; expected 0..1"},
           row{-1, 16, true, "device -1 does not exist"},
           // 132 rounds up to 136: no group fits, the driver refuses the split.
           row{0, 132, false, "partition::create: cuDevSmResourceSplitByCount"},
       }) {
    CAPTURE(r.device);
    CAPTURE(r.sm_count);
    const long before = fake_cuda_live_green_contexts();
    std::string what;
    if (r.invalid_argument) {
      const auto e = thrown<std::invalid_argument>([&] { (void)partition::create(r.device, r.sm_count); });
      REQUIRE(e.has_value());
      what = e->what();
    } else {
      const auto e = thrown<streamlike::error>([&] { (void)partition::create(r.device, r.sm_count); });
      REQUIRE(e.has_value());
      what = e->what();
    }
    CHECK_MESSAGE(contains(what, "partition::create"), what);
    CHECK_MESSAGE(contains(what, r.names), what);
    CHECK(fake_cuda_live_green_contexts() == before);
  }
}

TEST_CASE_FIXTURE(fake_setup, "partition::adopt destroys the green context with the last copy, borrow never") {
  const CUgreenCtx adopted_handle = raw_green_context(24);
  const CUgreenCtx borrowed_handle = raw_green_context(16);
  const long before = fake_cuda_live_green_contexts();
  {
    const partition adopted = partition::adopt(adopted_handle);
    const partition borrowed = partition::borrow(borrowed_handle);
    CHECK(adopted.owned());
    CHECK(!borrowed.owned());
    CHECK(adopted.sm_count() == 24);
    CHECK(borrowed.sm_count() == 16);
    CHECK(adopted.green_context() == adopted_handle);
    CHECK(adopted.id() != borrowed.id());
  }
  CHECK(fake_cuda_live_green_contexts() == before - 1); // the adopted one
  CHECK(driver_function<decltype(&cuGreenCtxDestroy)>("cuGreenCtxDestroy")(borrowed_handle) == 0);
  for (const char* who : {"partition::adopt", "partition::borrow"}) {
    const auto e = thrown<std::invalid_argument>([&] {
      (void)(std::string(who) == "partition::adopt" ? partition::adopt(nullptr) : partition::borrow(nullptr));
    });
    REQUIRE(e.has_value());
    CHECK_MESSAGE(contains(e->what(), who), e->what());
    CHECK_MESSAGE(contains(e->what(), "null green context"), e->what());
  }
}

TEST_CASE_FIXTURE(fake_setup, "an empty partition's queries throw, naming the query") {
  const partition empty;
  CHECK(!empty);
  CHECK(empty.use_count() == 0);
  const auto e = thrown<streamlike::error>([&] { (void)empty.sm_count(); });
  REQUIRE(e.has_value());
  CHECK_MESSAGE(contains(e->what(), "partition::sm_count"), e->what());
  // A stream cannot be made on it either.
  CHECK(thrown<streamlike::error>([&] { (void)shared_stream::create({.partition = empty}); }).has_value());
}

TEST_CASE_FIXTURE(fake_setup, "streams made on a partition report it; plain and default streams report not green") {
  const partition p = partition::create(0, 16);
  const shared_stream shared = shared_stream::create({.partition = p});
  const unique_stream unique = unique_stream::create({.priority = -1, .partition = p});
  for (const streamlike::stream_view s : {streamlike::stream_view(shared), streamlike::stream_view(unique)}) {
    const auto info = partition_of(s);
    CHECK(info.green);
    CHECK(info.device == 0);
    CHECK(info.sm_count == 16);
    CHECK(info.context_id == p.id());
    CHECK(info.green_context == p.green_context());
    CHECK(fake_cuda_green_context_of(s.get()) == p.green_context()); // made in it, as the driver sees
  }
  CHECK(shared.device() == 0);
  CHECK(shared.flags() == cudaStreamNonBlocking);
  unsigned long long driver_id = 0;
  REQUIRE(cudaStreamGetId(shared.get(), &driver_id) == cudaSuccess);
  CHECK(shared.id() == driver_id); // kept when made
  const long id_queries = fake_cuda_calls("cuStreamGetId");
  { const unique_stream more = unique_stream::create({.partition = p}); }
  CHECK(fake_cuda_calls("cuStreamGetId") == id_queries); // a unique_stream keeps no facts: none asked

  const shared_stream plain = shared_stream::create();
  const shared_stream on_device_1 = shared_stream::create({.device = 1});
  struct row {
    const char* name;
    streamlike::stream_view stream;
    int device;
  };
  for (const row& r : {row{"plain", plain, 0}, row{"plain on device 1", on_device_1, 1},
                       row{"legacy default", streamlike::stream_view::legacy_default(), 0},
                       row{"per-thread default", streamlike::stream_view::per_thread_default(), 0}}) {
    CAPTURE(r.name);
    const auto info = partition_of(r.stream);
    CHECK(!info.green);
    CHECK(info.green_context == nullptr);
    CHECK(info.device == r.device);
    CHECK(info.sm_count == 132); // every SM of the device
    CHECK(info.context_id != 0);
    CHECK(info.context_id != p.id());
  }
}

TEST_CASE_FIXTURE(fake_setup, "a stream handed on through the owned-stream ABI carries its partition") {
  const partition p = partition::create(0, 16);
  struct row {
    const char* name;
    shared_stream stream;
    CUgreenCtx_st* green_context;
    std::uint32_t sm_count;
  };
  for (const row& r : {row{"on a partition", shared_stream::create({.partition = p}), p.green_context(), 16},
                       row{"plain (its device's primary context)", shared_stream::create(), nullptr, 0}}) {
    CAPTURE(r.name);
    streamlike_owned_stream* out = streamlike::to_owned_stream(r.stream);
    CHECK((out->flags & STREAMLIKE_OWNED_STREAM_HAS_PARTITION) != 0);
    CHECK(out->green_context == static_cast<void*>(r.green_context));
    CHECK(out->sm_count == r.sm_count);
    // Taken back and handed on again: still there (a struct another module made: owned_stream.cpp).
    const shared_stream received = streamlike::from_owned_stream(out);
    streamlike_owned_stream* again = streamlike::to_owned_stream(received);
    CHECK(again->green_context == static_cast<void*>(r.green_context));
    CHECK(again->sm_count == r.sm_count);
    again->deleter(again);
  }
}

TEST_CASE_FIXTURE(fake_setup, "a stream on a partition refuses options it cannot have, by name") {
  const partition p = partition::create(0, 16);
  struct row {
    const char* name;
    std::optional<int> device;
    int priority;
    bool non_blocking;
    std::string names;
  };
  for (const row& r : {row{"blocking", std::nullopt, 0, false, "a blocking stream on a partition"},
                       row{"another device", 1, 0, true, "device 1 with a partition of device 0"},
                       row{"priority out of range", std::nullopt, 3, true, "priority 3"}}) {
    streamlike::stream_options options;
    options.device = r.device;
    options.priority = r.priority;
    options.non_blocking = r.non_blocking;
    options.partition = p;
    CAPTURE(r.name);
    const long streams = fake_cuda_live_streams();
    for (const char* who : {"shared_stream::create", "unique_stream::create"}) {
      const auto e = thrown<std::invalid_argument>([&] {
        if (std::string(who) == "shared_stream::create") {
          (void)shared_stream::create(options);
        } else {
          (void)unique_stream::create(options);
        }
      });
      REQUIRE(e.has_value());
      CHECK_MESSAGE(contains(e->what(), who), e->what());
      CHECK_MESSAGE(contains(e->what(), r.names), e->what());
    }
    CHECK(fake_cuda_live_streams() == streams);
  }
}

TEST_CASE_FIXTURE(fake_setup, "the last stream made on a partition keeps its green context alive") {
  const long greens = fake_cuda_live_green_contexts();
  const long orphans = fake_cuda_orphaned_green_streams();
  SUBCASE("shared_stream") {
    std::optional<partition> p = partition::create(0, 16);
    shared_stream s = shared_stream::create({.partition = *p});
    shared_stream copy = s;
    p.reset();
    CHECK(fake_cuda_live_green_contexts() == greens + 1);
    s = shared_stream();
    CHECK(fake_cuda_live_green_contexts() == greens + 1);
    CHECK(partition_of(copy).sm_count == 16);
    copy = shared_stream();
  }
  SUBCASE("unique_stream") {
    std::optional<partition> p = partition::create(0, 16);
    std::optional<unique_stream> s = unique_stream::create({.partition = *p});
    p.reset();
    CHECK(fake_cuda_live_green_contexts() == greens + 1);
    CHECK(partition_of(*s).green);
    const long driver_destroys = fake_cuda_calls("cuStreamDestroy");
    const long runtime_destroys = fake_cuda_calls("cudaStreamDestroy");
    s.reset();
    CHECK(fake_cuda_calls("cuStreamDestroy") == driver_destroys + 1); // its context is not current: no guard
    CHECK(fake_cuda_calls("cudaStreamDestroy") == runtime_destroys);
  }
  SUBCASE("unique_streams of two partitions, dropped neither first-made-first nor last-made-first") {
    std::optional<partition> a = partition::create(0, 16);
    std::optional<partition> b = partition::create(0, 32);
    std::optional<unique_stream> a1 = unique_stream::create({.partition = *a});
    std::optional<unique_stream> b1 = unique_stream::create({.partition = *b});
    std::optional<unique_stream> a2 = unique_stream::create({.partition = *a});
    std::optional<unique_stream> b2 = unique_stream::create({.partition = *b});
    a.reset();
    b.reset();
    // Each drop finds its own stream's partition: the driver's destroy, never the runtime's.
    const auto drop = [](std::optional<unique_stream>& s) {
      const long driver_destroys = fake_cuda_calls("cuStreamDestroy");
      const long runtime_destroys = fake_cuda_calls("cudaStreamDestroy");
      s.reset();
      CHECK(fake_cuda_calls("cuStreamDestroy") == driver_destroys + 1);
      CHECK(fake_cuda_calls("cudaStreamDestroy") == runtime_destroys);
    };
    CHECK(fake_cuda_live_green_contexts() == greens + 2);
    drop(a1); // neither the newest nor the oldest
    CHECK(fake_cuda_live_green_contexts() == greens + 2);
    CHECK(partition_of(*a2).sm_count == 16);
    drop(b2);
    CHECK(partition_of(*b1).sm_count == 32);
    drop(a2); // a's last stream: its green context goes
    CHECK(fake_cuda_live_green_contexts() == greens + 1);
    CHECK(partition_of(*b1).sm_count == 32);
    drop(b1);
  }
  SUBCASE("unique_stream moved into a shared_stream") {
    std::optional<partition> p = partition::create(0, 16);
    shared_stream s = streamlike::shared_stream::from_owner(unique_stream::create({.partition = *p}));
    p.reset();
    CHECK(fake_cuda_live_green_contexts() == greens + 1);
    CHECK(partition_of(s).green);
    s = shared_stream();
  }
  CHECK(fake_cuda_live_green_contexts() == greens);
  CHECK(fake_cuda_orphaned_green_streams() == orphans); // each stream went before its green context
}

// create takes its options by value, so that a partition in options built for the call moves into the
// stream. What a test can see of that: the stream holds one reference, however it got it, and options
// the caller keeps are never taken from.
TEST_CASE_FIXTURE(fake_setup, "a stream holds one reference to its partition; options the caller keeps stay whole") {
  const partition p = partition::create(0, 16);
  SUBCASE("shared_stream") {
    streamlike::stream_options options{.partition = p};
    const shared_stream s = shared_stream::create(std::move(options));
    CHECK(p.use_count() == 2); // p and the stream's
    const shared_stream t = shared_stream::create({.partition = p});
    CHECK(p.use_count() == 3);
  }
  SUBCASE("unique_stream") {
    streamlike::stream_options options{.partition = p};
    const unique_stream s = unique_stream::create(std::move(options));
    CHECK(p.use_count() == 2);
    const unique_stream t = unique_stream::create({.partition = p});
    CHECK(p.use_count() == 3);
  }
  SUBCASE("options the caller keeps are copied, and stay whole") {
    const streamlike::stream_options options{.partition = p};
    const shared_stream s = shared_stream::create(options);
    const unique_stream t = unique_stream::create(options);
    CHECK(p.use_count() == 4);
    CHECK(options.partition->sm_count() == 16);
  }
  CHECK(p.use_count() == 1);
}

TEST_CASE_FIXTURE(fake_setup, "stream_pool::get_for hands out streams of its caller's partition") {
  const partition a = partition::create(0, 16);
  const partition b = partition::create(0, 32);
  const CUgreenCtx foreign = raw_green_context(8); // a framework's (torch's) green context
  const cudaStream_t foreign_stream = raw_green_stream(foreign);
  {
    stream_pool pool(4);
    const shared_stream on_a = shared_stream::create({.partition = a});
    const shared_stream on_b = shared_stream::create({.partition = b});
    const shared_stream plain = shared_stream::create();
    struct row {
      const char* name;
      streamlike::stream_view caller;
    };
    for (const row& r :
         {row{"partition a", on_a}, row{"partition b", on_b}, row{"foreign green context", foreign_stream},
          row{"plain", plain}, row{"legacy default", streamlike::stream_view::legacy_default()}}) {
      CAPTURE(r.name);
      const auto caller = partition_of(r.caller);
      std::set<cudaStream_t> handed;
      for (int i = 0; i < 12; ++i) {
        const shared_stream side = pool.get_for(r.caller);
        handed.insert(side.get());
        CHECK(side.get() != r.caller.get());
        CHECK(partition_of(side) == caller); // same green context (or none), same SM count
      }
      CHECK(handed.size() == 4); // one sub-pool per partition, the pool's size, round-robin
      if (!caller.green) {
        for (const cudaStream_t h : handed) {
          bool in_pool = false;
          for (std::size_t i = 0; i < pool.size(); ++i) in_pool = in_pool || pool.at(i).get() == h;
          CHECK(in_pool); // plain streams get the plain pool
        }
      }
    }
    // A stream of another device than the pool's is refused by name.
    const shared_stream elsewhere = shared_stream::create({.device = 1});
    const auto e = thrown<std::invalid_argument>([&] { (void)pool.get_for(elsewhere); });
    REQUIRE(e.has_value());
    CHECK_MESSAGE(contains(e->what(), "stream_pool::get_for: a stream of device 1"), e->what());
  }
  // The sub-pools of a and b shared the partitions (not borrowed copies): the pool kept them alive.
  CHECK(a.use_count() == 1);
  CHECK(b.use_count() == 1);
  destroy_raw(foreign_stream, foreign);
}

TEST_CASE_FIXTURE(fake_setup, "get_for's sub-pool keeps a partition alive after its owner and streams drop") {
  const long greens = fake_cuda_live_green_contexts();
  {
    stream_pool pool(2);
    {
      const partition p = partition::create(0, 16);
      const shared_stream caller = shared_stream::create({.partition = p});
      (void)pool.get_for(caller);
    }
    CHECK(fake_cuda_live_green_contexts() == greens + 1);
  }
  CHECK(fake_cuda_live_green_contexts() == greens);
}

TEST_CASE_FIXTURE(fake_setup, "partition_of and get_for do not invalidate a capture, in any mode") {
  const partition p = partition::create(0, 16);
  stream_pool pool(2);
  for (const int mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed}) {
    CAPTURE(mode);
    const shared_stream green = shared_stream::create({.partition = p});
    const shared_stream plain = shared_stream::create();
    for (const shared_stream* s : {&green, &plain}) {
      const auto before = partition_of(*s);
      fake_cuda_reset_log();
      REQUIRE(fake_cuda_set_capture(s->get(), fake_cuda_active, mode) == 0);
      CHECK(partition_of(*s) == before);
      const shared_stream side = pool.get_for(*s);
      CHECK(partition_of(side).context_id == before.context_id);
      CHECK(fake_cuda_capture_status(s->get()) == fake_cuda_active);
      CHECK(fake_cuda_invalidations() == 0);
      REQUIRE(fake_cuda_set_capture(s->get(), fake_cuda_none, mode) == 0);
    }
  }
}

TEST_CASE_FIXTURE(fake_setup, "a green stream answers every query and ordering call a plain one does") {
  const partition p = partition::create(0, 16);
  const shared_stream green = shared_stream::create({.priority = -2, .partition = p});
  const shared_stream plain = shared_stream::create();
  const streamlike::stream_view view = green;
  CHECK(view.device() == 0);
  CHECK(view.flags() == cudaStreamNonBlocking);
  CHECK(view.priority() == -2);
  CHECK(view.id() == green.id());
  CHECK(view.is_done());
  view.sync();
  // wait, both ways, and through an event: unchanged across partitions.
  const long events = fake_cuda_live_events();
  plain.wait(green);
  green.wait(plain);
  {
    const streamlike::event done = green.record();
    streamlike::wait(plain, done);
    CHECK(done.is_done());
  }
  CHECK(fake_cuda_live_events() <= events + 2); // the ordering cache's events, one per context
  CHECK(fake_cuda_invalidations() == 0);
}

TEST_CASE_FIXTURE(fake_setup, "a green stream made current is the current stream, on its device") {
  const partition p = partition::create(0, 16);
  const shared_stream green = shared_stream::create({.partition = p});
  const auto before = streamlike::current_stream(0);
  {
    const streamlike::scoped_current_stream scope{green};
    CHECK(scope.device() == 0);
    CHECK(streamlike::current_stream(0) == green);
    CHECK(partition_of(streamlike::current_stream(0)).context_id == p.id());
  }
  CHECK(streamlike::current_stream(0) == before);
}

TEST_CASE_FIXTURE(fake_setup, "get_for asks the driver one capture-safe call, and a borrowed green context's id") {
  const partition p = partition::create(0, 16);
  const shared_stream green = shared_stream::create({.partition = p});
  const shared_stream plain = shared_stream::create();
  struct destroyed_last { // after the pool and the streams made in it
    CUgreenCtx handle;
    ~destroyed_last() { (void)driver_function<decltype(&cuGreenCtxDestroy)>("cuGreenCtxDestroy")(handle); }
  } borrowed_context{raw_green_context(16)};
  const shared_stream borrowed = shared_stream::create({.partition = partition::borrow(borrowed_context.handle)});
  stream_pool pool(2);
  using calls = std::map<std::string, long>;
  const auto calls_of = [&](streamlike::stream_view caller) {
    (void)pool.get_for(caller); // the first call makes the sub-pool and asks the pool's context
    fake_cuda_reset_log();
    (void)pool.get_for(caller);
    calls made;
    for (std::size_t i = 0; const char* name = fake_cuda_called(i); ++i) made[name] = fake_cuda_calls(name);
    return made;
  };
  // The caller's context (cuStreamGetCtx) finds the pool's own and an owned partition's sub-pool,
  // whose handles stay theirs while the pool holds them; a borrowed green context's handle may name
  // another one once its owner destroys it, so its sub-pool is found by the context's id (cuCtxGetId).
  CHECK(calls_of(green) == calls{{"cuStreamGetCtx", 1}});
  CHECK(calls_of(plain) == calls{{"cuStreamGetCtx", 1}});
  CHECK(calls_of(borrowed) == calls{{"cuCtxGetId", 1}, {"cuStreamGetCtx", 1}});
}

// A borrowed green context (torch's) may be destroyed by its owner while a pool lives, and the
// driver may hand its address to the next green context: the sub-pools are found by context id,
// which is never given twice.
TEST_CASE_FIXTURE(fake_setup, "get_for: a green context made at a destroyed one's address gets a sub-pool of its own") {
  const CUgreenCtx first = raw_green_context(8);
  const cudaStream_t first_stream = raw_green_stream(first);
  const unsigned long long first_id = partition_of(first_stream).context_id;
  std::set<cudaStream_t> first_side;
  std::set<cudaStream_t> second_side;
  CUgreenCtx second = nullptr;
  cudaStream_t second_stream = nullptr;
  {
    stream_pool pool(4);
    for (int i = 0; i < 4; ++i) first_side.insert(pool.get_for(first_stream).get());
    CHECK(first_side.size() == 4);
    destroy_raw(first_stream, first); // its owner's doing: the sub-pool's streams are left in a dead green context
    fake_cuda_reuse_green_context_handle(first);
    second = raw_green_context(16);
    REQUIRE(second == first); // the same address
    second_stream = raw_green_stream(second);
    const auto caller = partition_of(second_stream);
    REQUIRE(caller.context_id != first_id);
    const long streams = fake_cuda_live_streams();
    for (int i = 0; i < 8; ++i) {
      const shared_stream side = pool.get_for(second_stream);
      second_side.insert(side.get());
      CHECK(first_side.count(side.get()) == 0); // none of the dead green context's streams
      CHECK(partition_of(side) == caller);      // the new one's: its id, its 16 SMs
      streamlike_owned_stream* out = streamlike::to_owned_stream(side);
      CHECK(out->sm_count == 16); // and the partition the stream keeps is the new one
      out->deleter(out);
    }
    CHECK(second_side.size() == 4);
    CHECK(fake_cuda_live_streams() == streams + 4); // a sub-pool of its own
  }
  // The pool is gone: it destroyed its streams, but never those of the dead green context (dropped
  // when the new sub-pool was made), which CUDA leaves undefined to use.
  for (const cudaStream_t h : second_side) CHECK(fake_cuda_capture_status(h) == -1);            // destroyed
  for (const cudaStream_t h : first_side) CHECK(fake_cuda_capture_status(h) == fake_cuda_none); // still there
  destroy_raw(second_stream, second);
}

TEST_CASE_FIXTURE(fake_setup, "get_for refuses a green stream of another device by name, and makes no sub-pool") {
  stream_pool pool(2); // on device 0
  const partition elsewhere = partition::create(1, 16);
  const shared_stream caller = shared_stream::create({.partition = elsewhere});
  const long streams = fake_cuda_live_streams();
  const long uses = elsewhere.use_count();
  const auto e = thrown<std::invalid_argument>([&] { (void)pool.get_for(caller); });
  REQUIRE(e.has_value());
  CHECK_MESSAGE(contains(e->what(), "stream_pool::get_for: a green stream of device 1 (a partition of 16 SMs)"),
                e->what());
  CHECK_MESSAGE(contains(e->what(), "expected a stream of the pool's device 0"), e->what());
  CHECK(fake_cuda_live_streams() == streams); // no sub-pool made
  CHECK(elsewhere.use_count() == uses);       // nor a copy of the partition kept
  // A pool of device 1 serves it.
  stream_pool on_device_1(2, {.device = 1});
  const shared_stream side = on_device_1.get_for(caller);
  CHECK(partition_of(side) == partition_of(caller));
}

TEST_CASE_FIXTURE(fake_setup, "get_for's sub-pools have the pool's priority") {
  const partition p = partition::create(0, 16);
  const shared_stream caller = shared_stream::create({.partition = p}); // priority 0
  for (const int priority : {0, -1, -2}) {
    CAPTURE(priority);
    stream_pool pool(2, {.priority = priority});
    for (int i = 0; i < 4; ++i) {
      const shared_stream side = pool.get_for(caller);
      REQUIRE(partition_of(side).green);
      CHECK(side.priority() == priority);
      int asked = 99;
      REQUIRE(cudaStreamGetPriority(side.get(), &asked) == cudaSuccess);
      CHECK(asked == priority); // as the driver made it
    }
  }
}

TEST_CASE_FIXTURE(fake_setup, "partitions are equal when they are of one green context, by its context id") {
  const CUgreenCtx green = raw_green_context(16);
  {
    const partition a = partition::borrow(green);
    const partition b = partition::borrow(green); // two owners' objects, one green context
    CHECK(a.use_count() == 1);
    CHECK(b.use_count() == 1);
    CHECK(a == b);
    const partition other = partition::create(0, 16);
    CHECK(a != other);
    CHECK(partition() == partition());
    CHECK(partition() != a);
  }
  const partition before = partition::borrow(green);
  CHECK(driver_function<decltype(&cuGreenCtxDestroy)>("cuGreenCtxDestroy")(green) == 0);
  fake_cuda_reuse_green_context_handle(green);
  const CUgreenCtx again = raw_green_context(16);
  REQUIRE(again == green);
  const partition after = partition::borrow(again);
  CHECK(before.green_context() == after.green_context());
  CHECK(before != after); // the same handle, another context
  CHECK(driver_function<decltype(&cuGreenCtxDestroy)>("cuGreenCtxDestroy")(again) == 0);
}

// Run twice: as part of this program, and alone with STREAMLIKE_FAKE_CUDA_GREEN_CONTEXTS=0 (a driver
// without green contexts: test/host/meson.build), asserting what each driver gets.
TEST_CASE_FIXTURE(fake_setup, "without green contexts: create names the missing call, every stream is plain") {
  const char* setting = std::getenv("STREAMLIKE_FAKE_CUDA_GREEN_CONTEXTS");
  const bool green_contexts = setting == nullptr || std::strcmp(setting, "0") != 0;
  const shared_stream plain = shared_stream::create();
  stream_pool pool(2);
  const shared_stream side = pool.get_for(plain);
  CHECK(!partition_of(side).green);
  if (green_contexts) {
    CHECK(partition::create(0, 16).sm_count() == 16);
    CHECK(partition_of(plain).sm_count == 132);
    return;
  }
  const auto e = thrown<streamlike::error>([] { (void)partition::create(0, 16); });
  REQUIRE(e.has_value());
  CHECK_MESSAGE(contains(e->what(), "partition::create: cuDeviceGetDevResource"), e->what());
  CHECK_MESSAGE(contains(e->what(), "no green contexts"), e->what());
  const auto info = partition_of(plain);
  CHECK(!info.green);
  CHECK(info.sm_count == 0); // the driver cannot tell
  CHECK(info.context_id != 0);
}

TEST_CASE_FIXTURE(fake_setup, "unique_streams made and dropped on eight threads at once keep their own partitions") {
  std::optional<partition> a = partition::create(0, 16);
  std::optional<partition> b = partition::create(0, 32);
  const long greens = fake_cuda_live_green_contexts();
  const long driver_destroys = fake_cuda_calls("cuStreamDestroy");
  const long runtime_destroys = fake_cuda_calls("cudaStreamDestroy");
  constexpr int threads = 8;
  constexpr int per_thread = 400;
  std::atomic<int> elsewhere{0};
  {
    std::vector<std::jthread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const partition& on = t % 2 == 0 ? *a : *b;
        std::vector<unique_stream> held;
        for (int i = 0; i < per_thread; ++i) {
          held.push_back(unique_stream::create({.partition = on}));
          if (i % 3 == 2) held.erase(held.begin()); // the oldest: not the order the table favours
        }
        for (const unique_stream& s : held) {
          if (fake_cuda_green_context_of(s.get()) != on.green_context()) ++elsewhere;
        }
      });
    }
  }
  CHECK(elsewhere == 0);
  CHECK(fake_cuda_calls("cuStreamDestroy") == driver_destroys + threads * per_thread); // each found its entry
  CHECK(fake_cuda_calls("cudaStreamDestroy") == runtime_destroys);
  a.reset();
  b.reset();
  CHECK(fake_cuda_live_green_contexts() == greens - 2); // no entry kept a partition behind
}

TEST_CASE_FIXTURE(fake_setup, "get_for from eight threads at once makes one sub-pool and shares the partition") {
  const partition p = partition::create(0, 16);
  const shared_stream caller = shared_stream::create({.partition = p});
  stream_pool pool(4);
  const long streams = fake_cuda_live_streams();
  constexpr int threads = 8;
  std::vector<std::vector<shared_stream>> taken(threads);
  {
    std::vector<std::jthread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        for (int i = 0; i < 50; ++i) taken[static_cast<std::size_t>(t)].push_back(pool.get_for(caller));
      });
    }
  }
  CHECK(fake_cuda_live_streams() == streams + 4); // one sub-pool of the pool's size
  std::set<cudaStream_t> handed;
  for (const auto& some : taken) {
    for (const shared_stream& s : some) handed.insert(s.get());
  }
  CHECK(handed.size() == 4);
  for (const cudaStream_t h : handed) CHECK(fake_cuda_green_context_of(h) == p.green_context());
}
