// streamcheck: what a CUDA driver call is, for the checker (docs/streamcheck.md). Pure: no CUDA
// call, no CUPTI type; the CUPTI layer (cupti_injection.cpp) names each call it sees by its driver
// API name and asks here what it is.
#ifndef STREAMLIKE_SRC_STREAMCHECK_CALL_KIND_HPP
#define STREAMLIKE_SRC_STREAMCHECK_CALL_KIND_HPP

#include <cstdint>
#include <string_view>

namespace streamlike::check {

enum class call_kind {
  other,            // not checked (never subscribed)
  launch,           // cuLaunchKernel, cuLaunchKernelEx, cooperative launches
  async_copy,       // cuMemcpy*Async
  memset,           // cuMemsetD*Async
  host_function,    // cuLaunchHostFunc
  event_record,     // cuEventRecord, cuEventRecordWithFlags
  stream_wait,      // cuStreamWaitEvent
  graph_launch,     // cuGraphLaunch
  capture_punished, // prohibited while a capture runs: syncs, queries, cuMemAlloc/cuMemFree, sync copies
  capture_begin,    // cuStreamBeginCapture*
  capture_end,      // cuStreamEndCapture
  capture_mode,     // cuThreadExchangeStreamCaptureMode
};

/// The kind of the driver API `api` (e.g. "cuLaunchKernel_ptsz", "cuMemcpyHtoDAsync_v2"): the
/// version (_v2, _v3) and per-thread (_ptsz, _ptds) suffixes are read off first.
[[nodiscard]] call_kind classify(std::string_view api) noexcept;

/// "launch", "async copy", ...
[[nodiscard]] const char* kind_name(call_kind kind) noexcept;

/// Whether a call of this kind does work on the stream it is given: the calls judged against the
/// current stream. Event records and stream waits order streams against each other by design; a
/// capture-punished call is judged by the captures instead.
[[nodiscard]] constexpr bool works_on_stream(call_kind kind) noexcept {
  return kind == call_kind::launch || kind == call_kind::async_copy || kind == call_kind::memset ||
         kind == call_kind::host_function || kind == call_kind::graph_launch;
}

/// Whether a call of this kind begins, ends or changes the mode of captures: what the checker
/// follows even while paused, so that its view of the captures stays true.
[[nodiscard]] constexpr bool follows_captures(call_kind kind) noexcept {
  return kind == call_kind::capture_begin || kind == call_kind::capture_end || kind == call_kind::capture_mode;
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
