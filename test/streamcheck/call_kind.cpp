// streamcheck's classification of driver calls and its canonical default stream (no GPU).
#include "../../src/streamcheck/call_kind.hpp"
#include "../../src/streamcheck/library_streams.hpp"

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
      {"cuCtxSynchronize", call_kind::ctx_sync},
      {"cuCtxSynchronize_v2", call_kind::ctx_sync}, // CUDA 13's, naming the context
      {"cuStreamSynchronize", call_kind::stream_sync},
      {"cuStreamSynchronize_ptsz", call_kind::stream_sync},
      {"cuStreamQuery", call_kind::stream_query},
      {"cuEventSynchronize", call_kind::event_sync},
      {"cuEventQuery", call_kind::event_query},
      {"cuMemAlloc_v2", call_kind::alloc},
      {"cuMemAllocManaged", call_kind::alloc},
      {"cuMemFree_v2", call_kind::free},
      {"cuMemFreeHost", call_kind::free},
      {"cuMemcpy", call_kind::sync_copy},
      {"cuMemcpyHtoD_v2", call_kind::sync_copy},
      {"cuMemcpyDtoH_v2_ptds", call_kind::sync_copy},
      {"cuMemsetD8_v2", call_kind::sync_memset},
      {"cuMemAllocAsync", call_kind::alloc_async},
      {"cuMemAllocAsync_ptsz", call_kind::alloc_async},
      {"cuMemAllocFromPoolAsync_ptsz", call_kind::alloc_async},
      {"cuMemFreeAsync", call_kind::free_async},
      {"cuMemPrefetchAsync_v2_ptsz", call_kind::prefetch},
      {"cuStreamWriteValue32_v2", call_kind::write_value},
      {"cuStreamWriteValue64_ptsz", call_kind::write_value},
      {"cuStreamWaitValue32_v2_ptsz", call_kind::wait_value},
      {"cuStreamWaitValue64", call_kind::wait_value},
      {"cuStreamBatchMemOp_v2", call_kind::batch_mem_op},
      {"cuGraphUpload_ptsz", call_kind::graph_upload},
      {"cuStreamCreate", call_kind::stream_create},
      {"cuStreamCreateWithPriority", call_kind::stream_create},
      {"cuGreenCtxStreamCreate", call_kind::stream_create},
      {"cuStreamDestroy_v2", call_kind::stream_destroy},
      {"cuEventDestroy_v2", call_kind::event_destroy},
      {"cuStreamBeginCapture", call_kind::capture_begin},
      {"cuStreamBeginCapture_v2_ptsz", call_kind::capture_begin},
      {"cuStreamBeginCaptureToGraph", call_kind::capture_begin},
      {"cuStreamBeginRecaptureToGraph", call_kind::capture_begin},
      {"cuStreamEndCapture", call_kind::capture_end},
      {"cuStreamEndCapture_ptsz", call_kind::capture_end},
      {"cuThreadExchangeStreamCaptureMode", call_kind::capture_mode},
      // Not checked: queries of attributes are not punished and order nothing.
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
  CHECK(works_on_stream(call_kind::alloc_async));
  CHECK(works_on_stream(call_kind::free_async));
  CHECK(works_on_stream(call_kind::prefetch));
  CHECK(works_on_stream(call_kind::write_value));
  CHECK_FALSE(works_on_stream(call_kind::graph_upload));
  CHECK_FALSE(works_on_stream(call_kind::wait_value));
  CHECK_FALSE(works_on_stream(call_kind::event_record));
  CHECK_FALSE(works_on_stream(call_kind::stream_wait));
  CHECK_FALSE(works_on_stream(call_kind::stream_sync));
  CHECK_FALSE(works_on_stream(call_kind::capture_begin));
}

TEST_CASE("the calls a capture can punish whatever stream they name: syncs, queries, allocations, sync copies") {
  using streamlike::check::capture_punished;
  for (const call_kind punished :
       {call_kind::stream_sync, call_kind::stream_query, call_kind::event_sync, call_kind::event_query,
        call_kind::ctx_sync, call_kind::sync_copy, call_kind::sync_memset, call_kind::alloc, call_kind::free}) {
    CAPTURE(streamlike::check::kind_name(punished));
    CHECK(capture_punished(punished));
  }
  for (const call_kind not_punished : {call_kind::launch, call_kind::alloc_async, call_kind::event_record,
                                       call_kind::stream_wait, call_kind::stream_create, call_kind::other}) {
    CAPTURE(streamlike::check::kind_name(not_punished));
    CHECK_FALSE(capture_punished(not_punished));
  }
}

TEST_CASE("the calls that begin, end or change the mode of captures are the ones a pause still follows") {
  using streamlike::check::follows_captures;
  CHECK(follows_captures(call_kind::capture_begin));
  CHECK(follows_captures(call_kind::capture_end));
  CHECK(follows_captures(call_kind::capture_mode));
  for (const call_kind other :
       {call_kind::other, call_kind::launch, call_kind::async_copy, call_kind::memset, call_kind::host_function,
        call_kind::event_record, call_kind::stream_wait, call_kind::graph_launch, call_kind::stream_sync}) {
    CAPTURE(static_cast<int>(other));
    CHECK_FALSE(follows_captures(other));
  }
}

TEST_CASE("the libraries that order their own streams, by the file that made the stream") {
  using streamlike::check::orders_its_own_streams;
  for (const char* library :
       {"/usr/lib/x86_64-linux-gnu/libnccl.so.2",
        "/venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9",
        "/usr/local/cuda/lib64/libcublasLt.so.13", "libcufft.so.12", "/venv/site-packages/jaxlib/_jax.so",
        "/venv/site-packages/jax_cuda13_plugin/xla_cuda_plugin.so"}) {
    CAPTURE(library);
    CHECK(orders_its_own_streams(library));
  }
  for (const char* caller : {"/venv/site-packages/torch/lib/libc10_cuda.so",
                             "/venv/site-packages/cupy_backends/cuda/api/runtime.cpython-312-x86_64-linux-gnu.so",
                             "/home/me/build/libmylib_nccl_helpers.so", "/home/me/a.out", ""}) {
    CAPTURE(caller);
    CHECK_FALSE(orders_its_own_streams(caller));
  }
}
