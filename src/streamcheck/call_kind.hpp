// streamcheck: what a CUDA driver call is, for the checker (docs/streamcheck.md). Pure: no CUDA
// call, no CUPTI type; the CUPTI layer (cupti_injection.cpp) names each call it sees by its driver
// API name and asks here what it is.
#ifndef STREAMLIKE_SRC_STREAMCHECK_CALL_KIND_HPP
#define STREAMLIKE_SRC_STREAMCHECK_CALL_KIND_HPP

#include <cstdint>
#include <string_view>

namespace streamlike::check {

enum class call_kind {
  other, // not checked (never subscribed)
  // Work on the stream given: judged against the current stream.
  launch,        // cuLaunchKernel, cuLaunchKernelEx, cooperative launches
  async_copy,    // cuMemcpy*Async
  memset,        // cuMemsetD*Async
  host_function, // cuLaunchHostFunc, cuStreamAddCallback
  graph_launch,  // cuGraphLaunch
  alloc_async,   // cuMemAllocAsync, cuMemAllocFromPoolAsync: stream-ordered allocation
  free_async,    // cuMemFreeAsync
  prefetch,      // cuMemPrefetchAsync
  write_value,   // cuStreamWriteValue32/64: a memory word written in stream order
  // Work on the stream given that touches no memory of the program's: ordered, not judged.
  graph_upload, // cuGraphUpload
  // What orders streams.
  event_record, // cuEventRecord, cuEventRecordWithFlags
  stream_wait,  // cuStreamWaitEvent
  wait_value,   // cuStreamWaitValue32/64: waits for a memory word written by stream work
  batch_mem_op, // cuStreamBatchMemOp: waits and writes of memory words, in one call
  // What the host waits for (ordering the host after the work), and what a capture punishes.
  stream_sync,  // cuStreamSynchronize
  stream_query, // cuStreamQuery
  event_sync,   // cuEventSynchronize
  event_query,  // cuEventQuery
  ctx_sync,     // cuCtxSynchronize
  sync_copy,    // cuMemcpy*, not Async: work on the default stream the host waits for
  sync_memset,  // cuMemsetD*, not Async
  alloc,        // cuMemAlloc*, cuMemHostAlloc, cuArrayCreate
  free,         // cuMemFree*, cuArrayDestroy
  // What the checker follows: streams and events made and destroyed, captures.
  stream_create,  // cuStreamCreate, cuStreamCreateWithPriority, cuGreenCtxStreamCreate
  stream_destroy, // cuStreamDestroy
  event_destroy,  // cuEventDestroy
  capture_begin,  // cuStreamBeginCapture*
  capture_end,    // cuStreamEndCapture
  capture_mode,   // cuThreadExchangeStreamCaptureMode
};

/// The kind of the driver API `api` (e.g. "cuLaunchKernel_ptsz", "cuMemcpyHtoDAsync_v2"): the
/// version (_v2, _v3) and per-thread (_ptsz, _ptds) suffixes are read off first.
[[nodiscard]] call_kind classify(std::string_view api) noexcept;

/// "launch", "async copy", ...
[[nodiscard]] const char* kind_name(call_kind kind) noexcept;

/// Whether a call of this kind does work on the stream it is given that reads or writes the
/// program's memory: the calls judged against the current stream. Event records and stream waits
/// order streams against each other by design; a graph upload touches no memory of the program's.
[[nodiscard]] constexpr bool works_on_stream(call_kind kind) noexcept {
  switch (kind) {
    case call_kind::launch:
    case call_kind::async_copy:
    case call_kind::memset:
    case call_kind::host_function:
    case call_kind::graph_launch:
    case call_kind::alloc_async:
    case call_kind::free_async:
    case call_kind::prefetch:
    case call_kind::write_value: return true;
    default: return false;
  }
}

/// Whether a call of this kind is queued on the stream it is given: what advances that stream's
/// order (every judged call, and the ones that touch no memory of the program's).
[[nodiscard]] constexpr bool queued_on_stream(call_kind kind) noexcept {
  return works_on_stream(kind) || kind == call_kind::graph_upload;
}

/// Whether a capture can punish a call of this kind even when it names no capturing stream: CUDA's
/// "potentially unsafe" calls (syncs and queries), and the allocations and synchronous copies and
/// memsets that synchronize the device.
[[nodiscard]] constexpr bool capture_punished(call_kind kind) noexcept {
  switch (kind) {
    case call_kind::stream_sync:
    case call_kind::stream_query:
    case call_kind::event_sync:
    case call_kind::event_query:
    case call_kind::ctx_sync:
    case call_kind::sync_copy:
    case call_kind::sync_memset:
    case call_kind::alloc:
    case call_kind::free: return true;
    default: return false;
  }
}

/// Whether a call of this kind begins, ends or changes the mode of captures: what the checker
/// follows even while paused, so that its view of the captures stays true.
[[nodiscard]] constexpr bool follows_captures(call_kind kind) noexcept {
  return kind == call_kind::capture_begin || kind == call_kind::capture_end || kind == call_kind::capture_mode;
}

/// Whether the checker looks at a call of this kind after it returned, with its result: captures
/// begun and ended, streams made (their handle is known only then), and the waits of the host,
/// which order the host after the work only once they succeeded.
[[nodiscard]] constexpr bool noted_after(call_kind kind) noexcept {
  switch (kind) {
    case call_kind::capture_begin:
    case call_kind::capture_end:
    case call_kind::stream_create:
    case call_kind::stream_sync:
    case call_kind::stream_query:
    case call_kind::event_sync:
    case call_kind::event_query:
    case call_kind::ctx_sync:
    case call_kind::sync_copy:
    case call_kind::sync_memset: return true;
    default: return false;
  }
}

/// Whether a call of this kind names an object beside its stream (call_event::object): the event
/// of an event's record, wait, sync, query and destruction, the memory word of a stream-ordered
/// write or wait. Read only for these, so that a launch reads nothing it does not use.
[[nodiscard]] constexpr bool names_object(call_kind kind) noexcept {
  switch (kind) {
    case call_kind::event_record:
    case call_kind::stream_wait:
    case call_kind::event_sync:
    case call_kind::event_query:
    case call_kind::event_destroy:
    case call_kind::write_value:
    case call_kind::wait_value: return true;
    default: return false;
  }
}

/// Whether the checker looks at a call of this kind before it runs: every call but those it can
/// know only once they returned (captures begun and ended, streams made).
[[nodiscard]] constexpr bool judged_before(call_kind kind) noexcept {
  return kind != call_kind::other && kind != call_kind::capture_begin && kind != call_kind::capture_end &&
         kind != call_kind::stream_create;
}

// The stream handles CUDA gives meaning to.
inline constexpr std::uintptr_t legacy_stream = 0x1;     // cudaStreamLegacy, CU_STREAM_LEGACY
inline constexpr std::uintptr_t per_thread_stream = 0x2; // cudaStreamPerThread, CU_STREAM_PER_THREAD

/// The stream a call of `api` given `handle` works on, canonical: 0 is the legacy default stream
/// (legacy_stream), except in a per-thread entry point (_ptsz, _ptds: code compiled with
/// --default-stream per-thread) where it is the per-thread default stream (per_thread_stream).
[[nodiscard]] std::uintptr_t canonical_stream(std::string_view api, std::uintptr_t handle) noexcept;

/// The same for a current stream (no entry point: 0 is the legacy default stream, as streamlike's
/// current_stream() reads it).
[[nodiscard]] constexpr std::uintptr_t canonical_stream(std::uintptr_t handle) noexcept {
  return handle == 0 ? legacy_stream : handle;
}

[[nodiscard]] constexpr bool is_default_stream(std::uintptr_t canonical) noexcept {
  return canonical == legacy_stream || canonical == per_thread_stream;
}

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_CALL_KIND_HPP
