// streamlike/stream_pool.hpp on a device: pools made and dropped over and over destroy every
// stream they created exactly once (counted by interposing cudaStreamCreate*/cudaStreamDestroy),
// also when a stream outlives its pool; streams are handed out round-robin, from many threads at
// once in exact shares; options reach every stream; work runs on every pooled stream.
#include "call_counters.hpp"
#include "gpu_support.hpp"
#include "ownership_checks.hpp"
#include "timed_kernels.hpp"

#include <streamlike/get_stream.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_pool.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {
using streamlike::shared_stream;
using streamlike::stream_pool;
} // namespace

TEST_CASE("lifecycle: pools of 16 made and dropped until 100,000 streams; a stream may outlive its pool") {
  constexpr long pool_size = 16;
  const long pools = gpu_test::lifecycle_streams() / pool_size;
  gpu_test::check_lifecycle(
      "stream_pool churn", pools,
      [](long) {
        shared_stream survivor;
        bool ok = true;
        {
          stream_pool pool; // default size: 16
          ok = pool.size() == static_cast<std::size_t>(pool_size);
          std::set<cudaStream_t> handed_out;
          for (long i = 0; i < pool_size; ++i) handed_out.insert(pool.get().get());
          ok = ok && handed_out.size() == static_cast<std::size_t>(pool_size); // one full round: all distinct
          survivor = pool.get();
        }
        // The pool is gone; the stream it handed out lives on until its last reference drops.
        return ok && survivor.use_count() == 1 && call_counters::is_live(survivor.get());
      },
      pool_size);
}

TEST_CASE("round-robin: get() cycles through the streams; at() is a stable choice") {
  stream_pool pool{4};
  std::vector<cudaStream_t> order;
  for (int i = 0; i < 12; ++i) order.push_back(pool.get().get());
  const std::set<cudaStream_t> distinct(order.begin(), order.begin() + 4);
  CHECK(distinct.size() == 4);
  for (int i = 4; i < 12; ++i) CHECK(order[i] == order[i - 4]);
  for (std::size_t i = 0; i < 8; ++i) CHECK(pool.at(i) == pool.at(i + 4));
  CHECK(pool.at(1).use_count() == 1); // every stream handed out above has been dropped again
}

TEST_CASE("work runs on every pooled stream, and the pool's options reach each one") {
  int least = 0, greatest = 0;
  GPU_REQUIRE_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  int current = -1;
  GPU_REQUIRE_CUDA(cudaGetDevice(&current));

  SUBCASE("default options") {
    stream_pool pool;
    CHECK(pool.device() == current);
    for (std::size_t i = 0; i < pool.size(); ++i) {
      const shared_stream& s = pool.at(i);
      CHECK(s.flags() == cudaStreamNonBlocking);
      CHECK(s.device() == current);
      gpu_test::check_work_runs_on(streamlike::get_stream(s));
    }
  }
  SUBCASE("blocking, greatest priority") {
    stream_pool pool{3, {.priority = greatest, .non_blocking = false}};
    for (std::size_t i = 0; i < pool.size(); ++i) {
      const shared_stream s = pool.get();
      unsigned int flags = 99;
      int priority = 99;
      GPU_REQUIRE_CUDA(cudaStreamGetFlags(s.get(), &flags));
      GPU_REQUIRE_CUDA(cudaStreamGetPriority(s.get(), &priority));
      CHECK(flags == cudaStreamDefault);
      CHECK(priority == greatest);
      CHECK(s.priority() == greatest);
      gpu_test::check_work_runs_on(streamlike::get_stream(s));
    }
  }
}

TEST_CASE("get() from 8 threads at once: each stream is handed out an exact share") {
  constexpr int threads = 8;
  constexpr int gets = 100'000;
  stream_pool pool; // 16 streams; 8 * 100,000 gets is a multiple of 16
  std::mutex mutex;
  std::map<cudaStream_t, long> handed_out;
  std::atomic<bool> go{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      std::map<cudaStream_t, long> mine;
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < gets; ++i) ++mine[pool.get().get()];
      const std::lock_guard lock(mutex);
      for (const auto& [handle, n] : mine) handed_out[handle] += n;
    });
  }
  go = true;
  for (std::thread& w : workers) w.join();

  // One atomic increment per get(): every index is taken exactly once, so the shares are exact.
  REQUIRE(handed_out.size() == pool.size());
  const long share = static_cast<long>(threads) * gets / static_cast<long>(pool.size());
  for (const auto& [handle, n] : handed_out) {
    CHECK_MESSAGE(n == share,
                  "stream " << static_cast<void*>(handle) << " was handed out " << n << " times, expected " << share);
  }
  for (std::size_t i = 0; i < pool.size(); ++i) CHECK(pool.at(i).use_count() == 1);
}
