// cuda::launch (CCCL 3.1+) takes streamlike's owners as lvalues, through their implicit conversion
// to cuda::stream_ref: the kernel runs on the owner's stream. Built only against a CCCL that has
// cuda::launch (the newer CCCL of test/adapters/locate.py, or -Dcccl_include_dir), first on the
// include path.
#include "gpu_support.hpp"

#include <streamlike/shared_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <cuda/launch>
#include <doctest/doctest.h>

#include <type_traits>

namespace {

struct write_value {
  __device__ void operator()(int* out, int value) const { *out = value; }
};

// A gate holds the owner's stream, so the kernel launched through the owner cannot have run until
// it opens: the kernel ran on that stream, after the work already queued there.
template <class Owner>
void check_launch_runs_on(const Owner& owner) {
  static_assert(std::is_convertible_v<const Owner&, cuda::stream_ref>);
  gpu_test::mapped_ints out{1};
  const auto config = cuda::make_config(cuda::make_hierarchy(cuda::block_dims<1>(), cuda::grid_dims(1)));
  // Load the kernel before the gate closes: CUDA loads kernels lazily, and a first launch may
  // wait for the work already running (the held gate) until it times out.
  cuda::launch(owner, config, write_value{}, out.device(), 0);
  owner.sync();
  gpu_test::gate held;
  GPU_REQUIRE_CUDA(held.close(owner.get()));
  cuda::launch(owner, config, write_value{}, out.device(), 42);
  if (held.holds("the kernel launched through the owner waits while its stream is held")) {
    CHECK(out.read(0) == 0);
    CHECK_FALSE(owner.is_done());
  }
  held.open();
  owner.sync();
  CHECK_FALSE(held.timed_out());
  CHECK(out.read(0) == 42);
}

} // namespace

TEST_CASE("cuda::launch(shared_stream&, ...) runs the kernel on the shared_stream's stream") {
  const streamlike::shared_stream owner = streamlike::shared_stream::create();
  check_launch_runs_on(owner);
  streamlike::shared_stream mutable_owner = streamlike::shared_stream::create();
  check_launch_runs_on(mutable_owner);
}

TEST_CASE("cuda::launch(unique_stream&, ...) runs the kernel on the unique_stream's stream") {
  const streamlike::unique_stream owner = streamlike::unique_stream::create();
  check_launch_runs_on(owner);
}
