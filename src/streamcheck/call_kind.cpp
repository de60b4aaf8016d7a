#include "call_kind.hpp"

#include <array>
#include <utility>

namespace streamlike::check {
namespace {

bool ends_with(std::string_view s, std::string_view tail) noexcept {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}
bool starts_with(std::string_view s, std::string_view head) noexcept { return s.substr(0, head.size()) == head; }

bool per_thread_entry(std::string_view api) noexcept { return ends_with(api, "_ptsz") || ends_with(api, "_ptds"); }

// "cuMemcpyHtoDAsync_v2_ptsz" -> "cuMemcpyHtoDAsync"; "cu64MemsetD8Async" -> "cuMemsetD8Async".
std::string_view base_name(std::string_view api) noexcept {
  if (per_thread_entry(api)) api.remove_suffix(5);
  for (;;) { // _v2, _v3, ...
    const auto at = api.rfind("_v");
    if (at == std::string_view::npos || at + 2 >= api.size()) break;
    bool digits = true;
    for (char c : api.substr(at + 2)) digits = digits && c >= '0' && c <= '9';
    if (!digits) break;
    api = api.substr(0, at);
  }
  return api;
}

// Exact names first: the calls whose name says nothing of what they are.
constexpr std::array<std::pair<std::string_view, call_kind>, 51> exact{{
    {"cuLaunch", call_kind::launch},
    {"cuLaunchGrid", call_kind::launch},
    {"cuLaunchGridAsync", call_kind::launch},
    {"cuLaunchKernel", call_kind::launch},
    {"cuLaunchKernelEx", call_kind::launch},
    {"cuLaunchCooperativeKernel", call_kind::launch},
    {"cuLaunchCooperativeKernelMultiDevice", call_kind::launch},
    {"cuLaunchHostFunc", call_kind::host_function},
    {"cuStreamAddCallback", call_kind::host_function},
    {"cuGraphLaunch", call_kind::graph_launch},
    {"cuGraphUpload", call_kind::graph_upload},
    {"cuMemAllocAsync", call_kind::alloc_async},
    {"cuMemAllocFromPoolAsync", call_kind::alloc_async},
    {"cuMemFreeAsync", call_kind::free_async},
    {"cuMemPrefetchAsync", call_kind::prefetch},
    {"cuMemPrefetchBatchAsync", call_kind::prefetch},
    {"cuStreamWriteValue32", call_kind::write_value},
    {"cuStreamWriteValue64", call_kind::write_value},
    {"cuStreamWaitValue32", call_kind::wait_value},
    {"cuStreamWaitValue64", call_kind::wait_value},
    {"cuStreamBatchMemOp", call_kind::batch_mem_op},
    {"cuEventRecord", call_kind::event_record},
    {"cuEventRecordWithFlags", call_kind::event_record},
    {"cuStreamWaitEvent", call_kind::stream_wait},
    {"cuStreamSynchronize", call_kind::stream_sync},
    {"cuStreamQuery", call_kind::stream_query},
    {"cuEventSynchronize", call_kind::event_sync},
    {"cuEventQuery", call_kind::event_query},
    {"cuCtxSynchronize", call_kind::ctx_sync},
    {"cuMemAlloc", call_kind::alloc},
    {"cuMemAllocPitch", call_kind::alloc},
    {"cuMemAllocManaged", call_kind::alloc},
    {"cuMemAllocHost", call_kind::alloc},
    {"cuMemHostAlloc", call_kind::alloc},
    {"cuArrayCreate", call_kind::alloc},
    {"cuArray3DCreate", call_kind::alloc},
    {"cuMipmappedArrayCreate", call_kind::alloc},
    {"cuMemFree", call_kind::free},
    {"cuMemFreeHost", call_kind::free},
    {"cuArrayDestroy", call_kind::free},
    {"cuMipmappedArrayDestroy", call_kind::free},
    {"cuStreamCreate", call_kind::stream_create},
    {"cuStreamCreateWithPriority", call_kind::stream_create},
    {"cuGreenCtxStreamCreate", call_kind::stream_create},
    {"cuStreamDestroy", call_kind::stream_destroy},
    {"cuEventDestroy", call_kind::event_destroy},
    {"cuStreamBeginCapture", call_kind::capture_begin},
    {"cuStreamBeginCaptureToGraph", call_kind::capture_begin},
    {"cuStreamBeginRecaptureToGraph", call_kind::capture_begin}, // CUDA 13.3
    {"cuStreamEndCapture", call_kind::capture_end},
    {"cuThreadExchangeStreamCaptureMode", call_kind::capture_mode},
}};

} // namespace

call_kind classify(std::string_view api) noexcept {
  const std::string_view name = base_name(api);
  for (const auto& [known, kind] : exact) {
    if (name == known) return kind;
  }
  // The families: cuMemcpy*/cu64Memcpy*, cuMemset*/cu64Memset*, async or not.
  std::string_view family = name;
  if (starts_with(family, "cu64"))
    family = family.substr(4);
  else if (starts_with(family, "cu"))
    family = family.substr(2);
  else
    return call_kind::other;
  const bool async = ends_with(family, "Async");
  if (starts_with(family, "Memcpy")) return async ? call_kind::async_copy : call_kind::sync_copy;
  if (starts_with(family, "Memset")) return async ? call_kind::memset : call_kind::sync_memset;
  return call_kind::other;
}

const char* kind_name(call_kind kind) noexcept {
  switch (kind) {
    case call_kind::other: return "other";
    case call_kind::launch: return "launch";
    case call_kind::async_copy: return "async copy";
    case call_kind::memset: return "memset";
    case call_kind::host_function: return "host function";
    case call_kind::graph_launch: return "graph launch";
    case call_kind::alloc_async: return "stream-ordered allocation";
    case call_kind::free_async: return "stream-ordered free";
    case call_kind::prefetch: return "prefetch";
    case call_kind::write_value: return "memory write";
    case call_kind::graph_upload: return "graph upload";
    case call_kind::event_record: return "event record";
    case call_kind::stream_wait: return "stream wait";
    case call_kind::wait_value: return "memory wait";
    case call_kind::batch_mem_op: return "memory operations";
    case call_kind::stream_sync: return "stream synchronization";
    case call_kind::stream_query: return "stream query";
    case call_kind::event_sync: return "event synchronization";
    case call_kind::event_query: return "event query";
    case call_kind::ctx_sync: return "context synchronization";
    case call_kind::sync_copy: return "synchronous copy";
    case call_kind::sync_memset: return "synchronous memset";
    case call_kind::alloc: return "allocation";
    case call_kind::free: return "free";
    case call_kind::stream_create: return "stream creation";
    case call_kind::stream_destroy: return "stream destruction";
    case call_kind::event_destroy: return "event destruction";
    case call_kind::capture_begin: return "capture begin";
    case call_kind::capture_end: return "capture end";
    case call_kind::capture_mode: return "capture mode exchange";
  }
  return "unknown";
}

std::uintptr_t canonical_stream(std::string_view api, std::uintptr_t handle) noexcept {
  if (handle == 0) return per_thread_entry(api) ? per_thread_stream : legacy_stream;
  return handle;
}

} // namespace streamlike::check
