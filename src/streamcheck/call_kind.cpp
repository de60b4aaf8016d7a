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
constexpr std::array<std::pair<std::string_view, call_kind>, 31> exact{{
    {"cuLaunch", call_kind::launch},
    {"cuLaunchGrid", call_kind::launch},
    {"cuLaunchGridAsync", call_kind::launch},
    {"cuLaunchKernel", call_kind::launch},
    {"cuLaunchKernelEx", call_kind::launch},
    {"cuLaunchCooperativeKernel", call_kind::launch},
    {"cuLaunchCooperativeKernelMultiDevice", call_kind::launch},
    {"cuLaunchHostFunc", call_kind::host_function},
    {"cuStreamAddCallback", call_kind::host_function},
    {"cuEventRecord", call_kind::event_record},
    {"cuEventRecordWithFlags", call_kind::event_record},
    {"cuStreamWaitEvent", call_kind::stream_wait},
    {"cuGraphLaunch", call_kind::graph_launch},
    {"cuStreamBeginCapture", call_kind::capture_begin},
    {"cuStreamBeginCaptureToGraph", call_kind::capture_begin},
    {"cuStreamEndCapture", call_kind::capture_end},
    {"cuThreadExchangeStreamCaptureMode", call_kind::capture_mode},
    // What a capture punishes (CUDA's "potentially unsafe" calls, and the allocations and copies
    // that synchronize the device).
    {"cuCtxSynchronize", call_kind::capture_punished},
    {"cuStreamSynchronize", call_kind::capture_punished},
    {"cuStreamQuery", call_kind::capture_punished},
    {"cuEventSynchronize", call_kind::capture_punished},
    {"cuEventQuery", call_kind::capture_punished},
    {"cuMemAlloc", call_kind::capture_punished},
    {"cuMemAllocPitch", call_kind::capture_punished},
    {"cuMemAllocManaged", call_kind::capture_punished},
    {"cuMemAllocHost", call_kind::capture_punished},
    {"cuMemHostAlloc", call_kind::capture_punished},
    {"cuMemFree", call_kind::capture_punished},
    {"cuMemFreeHost", call_kind::capture_punished},
    {"cuArrayCreate", call_kind::capture_punished},
    {"cuArrayDestroy", call_kind::capture_punished},
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
  if (starts_with(family, "Memcpy")) return async ? call_kind::async_copy : call_kind::capture_punished;
  if (starts_with(family, "Memset")) return async ? call_kind::memset : call_kind::capture_punished;
  return call_kind::other;
}

const char* kind_name(call_kind kind) noexcept {
  switch (kind) {
    case call_kind::other: return "other";
    case call_kind::launch: return "launch";
    case call_kind::async_copy: return "async copy";
    case call_kind::memset: return "memset";
    case call_kind::host_function: return "host function";
    case call_kind::event_record: return "event record";
    case call_kind::stream_wait: return "stream wait";
    case call_kind::graph_launch: return "graph launch";
    case call_kind::capture_punished: return "capture-punished call";
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
