// Tests for streamlike/adapters/thrust.hpp: Thrust CUDA execution policies bound to a stream are
// stream_like, and yield the stream Thrust itself would run on; unbound policies are not.
// Host cases use fake handles (never dereferenced); the case of the doctest suite "gpu" runs an
// algorithm.
#include <streamlike/adapters/thrust.hpp>

#include <streamlike/stream_like.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <thrust/device_allocator.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/host_vector.h>
#include <thrust/sequence.h>

#include <cstdint>
#include <utility>

using streamlike::stream_view;

namespace {

cudaStream_t fake_handle(std::uintptr_t address) { return reinterpret_cast<cudaStream_t>(address); }

// Thrust's own answer, through its public entry point (which wants a non-const lvalue).
template <class Policy>
cudaStream_t thrust_says(Policy policy) {
  return thrust::cuda_cub::stream(policy);
}

// A library's own policy type derived from Thrust's, as rmm::exec_policy is.
struct derived_policy : thrust::cuda_cub::execute_on_stream {
  explicit derived_policy(cudaStream_t s) : thrust::cuda_cub::execute_on_stream(s) {}
};

} // namespace

TEST_CASE("par.on(s) and par_nosync.on(s) are stream_like and yield s") {
  const auto on = thrust::cuda::par.on(fake_handle(0x1000));
  const auto nosync = thrust::cuda::par_nosync.on(fake_handle(0x2000));
  static_assert(streamlike::nothrow_stream_like<decltype(on)>);
  static_assert(streamlike::nothrow_stream_like<const decltype(nosync)&>);
  CHECK(streamlike::get_stream(on) == fake_handle(0x1000));
  CHECK(streamlike::get_stream(nosync) == fake_handle(0x2000));
  CHECK(streamlike::get_stream(thrust::cuda::par.on(fake_handle(0x1100))) ==
        fake_handle(0x1100)); // a temporary is a value
  // The same stream Thrust runs its algorithms on.
  CHECK(streamlike::get_stream(on) == thrust_says(on));
  CHECK(streamlike::get_stream(nosync) == thrust_says(nosync));
}

TEST_CASE("allocator-aware and derived policies bound to a stream are stream_like") {
  const auto with_allocator = thrust::cuda::par(thrust::device_allocator<char>{}).on(fake_handle(0x3000));
  CHECK(streamlike::get_stream(with_allocator) == fake_handle(0x3000));
  CHECK(streamlike::get_stream(with_allocator) == thrust_says(with_allocator));
  const auto nosync_with_allocator = thrust::cuda::par_nosync(thrust::device_allocator<char>{}).on(fake_handle(0x3100));
  CHECK(streamlike::get_stream(nosync_with_allocator) == fake_handle(0x3100));

  const derived_policy derived{fake_handle(0x4000)};
  static_assert(streamlike::nothrow_stream_like<const derived_policy&>);
  CHECK(streamlike::get_stream(derived) == fake_handle(0x4000));
}

TEST_CASE("a policy not bound to a stream is not stream_like") {
  // Thrust would pick the calling translation unit's default stream: streamlike makes callers say which.
  static_assert(!streamlike::stream_like<decltype(thrust::cuda::par)>);
  static_assert(!streamlike::stream_like<decltype(thrust::cuda::par_nosync)>);
  static_assert(!streamlike::stream_like<decltype(thrust::device)>);
  static_assert(!streamlike::stream_like<decltype(thrust::host)>);
  CHECK(true); // the assertions above are the test
}

TEST_CASE("a generic function takes a bound policy where it takes any stream") {
  const auto edge = []<streamlike::stream_like S>(S&& s) { return streamlike::get_stream(std::forward<S>(s)); };
  CHECK(edge(thrust::cuda::par_nosync.on(cudaStreamPerThread)) == stream_view::per_thread_default());
}

TEST_SUITE("gpu") {
  TEST_CASE("an algorithm run with par_nosync.on(owner) is done once the view from the policy is synchronized") {
    auto owner = streamlike::unique_stream::create();
    thrust::device_vector<int> values(1 << 20);
    const auto policy = thrust::cuda::par_nosync.on(owner.get());
    thrust::sequence(policy, values.begin(), values.end()); // asynchronous on owner
    const stream_view view = streamlike::get_stream(policy);
    CHECK(view == owner.view());
    view.sync();
    CHECK(owner.view().is_done());
    thrust::host_vector<int> copy = values;
    CHECK(copy[0] == 0);
    CHECK(copy[(1 << 20) - 1] == (1 << 20) - 1);
  }
}
