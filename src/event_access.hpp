// detail::event_access: the library's one way to make an event from a handle and to record one
// (a friend of event), for src/ alone.
#ifndef STREAMLIKE_SRC_EVENT_ACCESS_HPP
#define STREAMLIKE_SRC_EVENT_ACCESS_HPP

#include <streamlike/event.hpp>

#include <cuda_runtime_api.h>

namespace streamlike::detail {

struct event_access {
  [[nodiscard]] static event make(cudaEvent_t handle) noexcept { return event(handle); }

  /// cudaEventRecord, remembering the capture the stream is in (asked first: capture-safe). A
  /// failed record leaves what the event remembers as it was. `type` names the caller in errors.
  static void record(event& e, cudaStream_t stream, const char* type);
};

} // namespace streamlike::detail

#endif // STREAMLIKE_SRC_EVENT_ACCESS_HPP
