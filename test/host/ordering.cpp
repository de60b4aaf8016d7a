// Tests for streamlike/ordering.hpp and stream_view::wait that need no GPU: waiting on the same
// stream is a no-op that makes no CUDA call (so it succeeds even without a driver, where every
// CUDA call fails), waiting on another stream reaches CUDA (and fails without a driver), and
// streamlike::wait(consumer, producer) accepts exactly the stream_like arguments.
#include <streamlike/ordering.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

using streamlike::shared_stream;
using streamlike::stream_view;
using host_test::thrown;
using host_test::device_present;
using host_test::check_no_device_error;
using host_test::fake_handle;

namespace {

template <class Consumer, class Producer>
concept can_wait = requires(Consumer&& c, Producer&& p) {
  streamlike::wait(std::forward<Consumer>(c), std::forward<Producer>(p));
};

} // namespace

TEST_CASE("streamlike::wait accepts any two stream_like arguments and nothing else") {
  static_assert(can_wait<stream_view, stream_view>);
  static_assert(can_wait<cudaStream_t, stream_view>);
  static_assert(can_wait<stream_view, cuda::stream_ref>);
  static_assert(can_wait<shared_stream&, const shared_stream&>);
  static_assert(can_wait<streamlike::unique_stream&, cudaStream_t>);
  static_assert(can_wait<stream_view, const streamlike::unique_stream&>);
  // Integers and null are not streams.
  static_assert(!can_wait<int, stream_view>);
  static_assert(!can_wait<stream_view, int>);
  static_assert(!can_wait<std::nullptr_t, stream_view>);
  static_assert(!can_wait<stream_view, void*>);
  // Temporaries that own (or share) their stream would dangle.
  static_assert(!can_wait<streamlike::unique_stream, stream_view>);
  static_assert(!can_wait<stream_view, streamlike::unique_stream>);
  static_assert(!can_wait<stream_view, shared_stream>);
}

TEST_CASE("stream_view::wait accepts a stream handle or an event") {
  static_assert(requires(stream_view v, stream_view p) { v.wait(p); });
  static_assert(requires(stream_view v, cudaStream_t p) { v.wait(p); });
  static_assert(requires(stream_view v, cuda::stream_ref p) { v.wait(p); });
  static_assert(requires(stream_view v, cudaEvent_t e) { v.wait(e); });
}

TEST_CASE("waiting on the same stream is a no-op that makes no CUDA call") {
  // Default-stream handles: harmless even if a CUDA call were made.
  for (const stream_view s :
       {stream_view::legacy_default(), stream_view::per_thread_default(), stream_view{cudaStream_t{}}}) {
    CHECK_NOTHROW(s.wait(s));
    CHECK_NOTHROW(streamlike::wait(s, s));
  }
  const shared_stream a = shared_stream::keep_alive(stream_view::per_thread_default(), 0);
  const shared_stream b = shared_stream::keep_alive(stream_view::per_thread_default(), 1);
  CHECK_NOTHROW(streamlike::wait(a, a));
  CHECK_NOTHROW(streamlike::wait(a, b)); // two owners of one handle: the same stream
  CHECK_NOTHROW(streamlike::wait(a, cudaStreamPerThread));

  if (device_present()) {
    MESSAGE("a CUDA device is present: the no-CUDA-call proof below needs a machine without one");
    return;
  }
  // Without a driver every CUDA call fails and wait reports failures, so succeeding proves no
  // call was made; a fake handle (which must never reach CUDA) shows it for any handle.
  const cudaStream_t fake = fake_handle(0x1234);
  CHECK_NOTHROW(stream_view{fake}.wait(stream_view{fake}));
  CHECK_NOTHROW(streamlike::wait(fake, fake));
  streamlike::unique_stream owner = streamlike::unique_stream::adopt(fake);
  CHECK_NOTHROW(streamlike::wait(owner, stream_view{fake}));
  CHECK(owner.release() == fake); // never let the destructor see the fake handle
}

TEST_CASE("waiting on another stream reaches CUDA: without a device it throws naming the call") {
  if (device_present()) {
    MESSAGE("a CUDA device is present: skipping the no-device checks");
    return;
  }
  // The control for the test above: distinct handles do call CUDA (the producer's device first).
  const stream_view legacy = stream_view::legacy_default();
  const stream_view per_thread = stream_view::per_thread_default();
  check_no_device_error(thrown<streamlike::error>([&] { legacy.wait(per_thread); }), "cudaStreamGetDevice");
  check_no_device_error(thrown<streamlike::error>([&] { streamlike::wait(per_thread, legacy); }),
                        "cudaStreamGetDevice");
  const shared_stream shared_legacy = shared_stream::legacy_default();
  check_no_device_error(thrown<streamlike::error>([&] { streamlike::wait(shared_legacy, per_thread); }),
                        "cudaStreamGetDevice");
  // Waiting on an event is one CUDA call.
  check_no_device_error(thrown<streamlike::error>([&] { legacy.wait(cudaEvent_t{}); }), "cudaStreamWaitEvent");
}
