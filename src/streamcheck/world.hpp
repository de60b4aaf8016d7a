// streamcheck: what the checker asks of the process it runs in, as plain function pointers (no
// cost beyond the call). The CUPTI layer fills it with the real process (the current streams of
// the frameworks, backtraces, the Python frame); the host tests with a fake one.
#ifndef STREAMLIKE_SRC_STREAMCHECK_WORLD_HPP
#define STREAMLIKE_SRC_STREAMCHECK_WORLD_HPP

#include "report.hpp"

#include <cstdint>
#include <string>

namespace streamlike::check {

struct world {
  /// The calling thread's current stream on `device` as its frameworks agree on it (a handle: 0
  /// and 0x1 the legacy default stream, 0x2 the per-thread one), and which provider set it. False
  /// when it cannot be known now: then no wrong-stream report.
  bool (*current_stream)(void* context, int device, std::uintptr_t* stream) = nullptr;
  /// The calling thread's call site: addresses and python (cheap: taken only for a report).
  void (*take_call_site)(void* context, call_site& site) = nullptr;
  /// Fills site.frames from site.addresses (taken once per call site).
  void (*symbolize)(void* context, call_site& site) = nullptr;
  /// For a wrong-stream report only: which framework set the current stream on `device` and which
  /// others name another one ("set by torch, while cupy names 0x8000"); empty when all agree.
  std::string (*current_stream_answers)(void* context, int device) = nullptr;
  void* context = nullptr;
};

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_WORLD_HPP
