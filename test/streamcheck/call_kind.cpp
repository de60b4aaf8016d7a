// streamcheck's classification of driver calls and its canonical default stream (no GPU).
#include "../../src/streamcheck/call_kind.hpp"

#include <doctest/doctest.h>

#include <string_view>

using streamlike::check::call_kind;
using streamlike::check::canonical_stream;
using streamlike::check::classify;

TEST_CASE("every kind of driver call is classified, whatever its version and per-thread suffix") {
  struct row {
    std::string_view api;
    call_kind kind;
  };
  const row rows[] = {
      {"cuLaunchKernel", call_kind::launch},
      {"cuLaunchKernel_ptsz", call_kind::launch},
      {"cuLaunchKernelEx", call_kind::launch},
      {"cuLaunchKernelEx_ptsz", call_kind::launch},
      {"cuLaunchCooperativeKernel", call_kind::launch},
      {"cuLaunchCooperativeKernel_ptsz", call_kind::launch},
      {"cuLaunchCooperativeKernelMultiDevice", call_kind::launch},
      {"cuMemcpyAsync", call_kind::async_copy},
      {"cuMemcpyHtoDAsync_v2", call_kind::async_copy},
      {"cuMemcpyDtoHAsync_v2_ptsz", call_kind::async_copy},
      {"cu64MemcpyDtoDAsync", call_kind::async_copy},
      {"cuMemcpy3DPeerAsync_ptsz", call_kind::async_copy},
      {"cuMemcpyBatchAsync", call_kind::async_copy},
      {"cuMemsetD8Async", call_kind::memset},
      {"cuMemsetD2D32Async_ptsz", call_kind::memset},
      {"cu64MemsetD8Async", call_kind::memset},
      {"cuLaunchHostFunc", call_kind::host_function},
      {"cuLaunchHostFunc_ptsz", call_kind::host_function},
      {"cuStreamAddCallback", call_kind::host_function},
      {"cuEventRecord", call_kind::event_record},
      {"cuEventRecordWithFlags_ptsz", call_kind::event_record},
      {"cuStreamWaitEvent", call_kind::stream_wait},
      {"cuStreamWaitEvent_ptsz", call_kind::stream_wait},
      {"cuGraphLaunch", call_kind::graph_launch},
      {"cuGraphLaunch_ptsz", call_kind::graph_launch},
      {"cuCtxSynchronize", call_kind::capture_punished},
      {"cuCtxSynchronize_v2", call_kind::capture_punished}, // CUDA 13's, naming the context
      {"cuStreamSynchronize", call_kind::capture_punished},
      {"cuStreamSynchronize_ptsz", call_kind::capture_punished},
      {"cuStreamQuery", call_kind::capture_punished},
      {"cuEventSynchronize", call_kind::capture_punished},
      {"cuEventQuery", call_kind::capture_punished},
      {"cuMemAlloc_v2", call_kind::capture_punished},
      {"cuMemAllocManaged", call_kind::capture_punished},
      {"cuMemFree_v2", call_kind::capture_punished},
      {"cuMemFreeHost", call_kind::capture_punished},
      {"cuMemcpy", call_kind::capture_punished},
      {"cuMemcpyHtoD_v2", call_kind::capture_punished},
      {"cuMemcpyDtoH_v2_ptds", call_kind::capture_punished},
      {"cuMemsetD8_v2", call_kind::capture_punished},
      {"cuStreamBeginCapture", call_kind::capture_begin},
      {"cuStreamBeginCapture_v2_ptsz", call_kind::capture_begin},
      {"cuStreamBeginCaptureToGraph", call_kind::capture_begin},
      {"cuStreamEndCapture", call_kind::capture_end},
      {"cuStreamEndCapture_ptsz", call_kind::capture_end},
      {"cuThreadExchangeStreamCaptureMode", call_kind::capture_mode},
      // Not checked: async allocation is capturable, and queries of attributes are not punished.
      {"cuMemAllocAsync", call_kind::other},
      {"cuMemFreeAsync_ptsz", call_kind::other},
      {"cuStreamGetFlags", call_kind::other},
      {"cuStreamIsCapturing", call_kind::other},
      {"cuCtxGetDevice", call_kind::other},
      {"cuInit", call_kind::other},
      {"", call_kind::other},
      {"notcuda", call_kind::other},
  };
  for (const row& r : rows) {
    CAPTURE(r.api);
    CHECK(classify(r.api) == r.kind);
  }
}

TEST_CASE("the canonical default stream: 0 is the legacy one, except in a per-thread entry point") {
  CHECK(canonical_stream("cuLaunchKernel", 0) == streamlike::check::legacy_stream);
  CHECK(canonical_stream("cuLaunchKernel", 0x1) == streamlike::check::legacy_stream);
  CHECK(canonical_stream("cuLaunchKernel", 0x2) == streamlike::check::per_thread_stream);
  CHECK(canonical_stream("cuLaunchKernel_ptsz", 0) == streamlike::check::per_thread_stream);
  CHECK(canonical_stream("cuMemcpyDtoH_v2_ptds", 0) == streamlike::check::per_thread_stream);
  CHECK(canonical_stream("cuLaunchKernel_ptsz", 0x1) == streamlike::check::legacy_stream);
  CHECK(canonical_stream("cuLaunchKernel_ptsz", 0x1234) == 0x1234);
  CHECK(canonical_stream(0) == streamlike::check::legacy_stream);
  CHECK(canonical_stream(0x2) == streamlike::check::per_thread_stream);
  CHECK(streamlike::check::is_default_stream(canonical_stream(0)));
  CHECK(streamlike::check::is_default_stream(0x2));
  CHECK_FALSE(streamlike::check::is_default_stream(0x1234));
}

TEST_CASE("only calls that work on their stream are judged against the current stream") {
  using streamlike::check::works_on_stream;
  CHECK(works_on_stream(call_kind::launch));
  CHECK(works_on_stream(call_kind::async_copy));
  CHECK(works_on_stream(call_kind::memset));
  CHECK(works_on_stream(call_kind::host_function));
  CHECK(works_on_stream(call_kind::graph_launch));
  CHECK_FALSE(works_on_stream(call_kind::event_record));
  CHECK_FALSE(works_on_stream(call_kind::stream_wait));
  CHECK_FALSE(works_on_stream(call_kind::capture_punished));
  CHECK_FALSE(works_on_stream(call_kind::capture_begin));
}

TEST_CASE("the calls that begin, end or change the mode of captures are the ones a pause still follows") {
  using streamlike::check::follows_captures;
  CHECK(follows_captures(call_kind::capture_begin));
  CHECK(follows_captures(call_kind::capture_end));
  CHECK(follows_captures(call_kind::capture_mode));
  for (const call_kind other :
       {call_kind::other, call_kind::launch, call_kind::async_copy, call_kind::memset, call_kind::host_function,
        call_kind::event_record, call_kind::stream_wait, call_kind::graph_launch, call_kind::capture_punished}) {
    CAPTURE(static_cast<int>(other));
    CHECK_FALSE(follows_captures(other));
  }
}
