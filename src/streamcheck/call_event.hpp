// streamcheck: one driver call as the checker sees it. Pure: no CUDA call, no CUPTI type.
#ifndef STREAMLIKE_SRC_STREAMCHECK_CALL_EVENT_HPP
#define STREAMLIKE_SRC_STREAMCHECK_CALL_EVENT_HPP

#include "call_kind.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace streamlike::check {

/// One driver call, as the CUPTI layer saw it.
struct call_event {
  call_kind kind = call_kind::other;
  // The driver API's name, e.g. "cuLaunchKernel_ptsz" (CUPTI's string, never freed): measured only
  // where a name is read (a default stream's handle, a report), not on every call.
  const char* api = "";
  bool has_stream = false;   // whether the call takes a stream (and `stream` is it)
  std::uintptr_t stream = 0; // canonical_stream(api, the handle given)
  int device = 0;            // the device of the call's context; -1: unknown (no wrong-stream report)
  std::uint64_t thread = 0;  // the calling thread
  // capture_begin: the capture's mode; capture_mode: the mode the thread switches to.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  bool blocking = true; // capture_begin, stream_create: whether the stream synchronizes with the legacy one
  // Seen after the call returned (noted_after kinds), not before it runs; then whether it succeeded.
  bool returned = false;
  bool succeeded = true;
  // stream_create: the code that made the stream is a library that orders its own streams.
  bool library_stream = false;
  // event_record, stream_wait, event_sync, event_destroy: the event; write_value, wait_value: the
  // address of the memory word.
  std::uintptr_t object = 0;
};

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_CALL_EVENT_HPP
