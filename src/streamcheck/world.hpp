// streamcheck: what the checker asks of the process it runs in, as plain function pointers (no
// cost beyond the call). The CUPTI layer fills it with the real process (the current streams of
// the frameworks, the native and Python call sites); the host tests with a fake one.
#ifndef STREAMLIKE_SRC_STREAMCHECK_WORLD_HPP
#define STREAMLIKE_SRC_STREAMCHECK_WORLD_HPP

#include "report.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace streamlike::check {

struct world {
  /// The calling thread's current stream on `device` as its frameworks agree on it (a handle: 0
  /// and 0x1 the legacy default stream, 0x2 the per-thread one), and which provider set it. False
  /// when it cannot be known now: then no wrong-stream report.
  bool (*current_stream)(void* context, int device, std::uintptr_t* stream) = nullptr;
  /// The calling thread's native call site into site.addresses: taken for every report, repeats
  /// included (it is how a repeat is known), so it must be cheap for a stack seen before.
  void (*take_native_site)(void* context, call_site& site) = nullptr;
  /// The calling thread's Python frames: `identity`, without text (per frame from the innermost
  /// to the one a report names, its code object and position), and when `location` is not null
  /// the file:line a report names; both empty where Python does not run on the thread. Asked for
  /// the identity alone in a repeat at a native site whose first report had a Python location;
  /// for the location only for what was not seen before.
  void (*take_python_site)(void* context, std::vector<std::uintptr_t>& identity, std::string* location) = nullptr;
  /// Fills site.frames from site.addresses (once per native call site).
  void (*symbolize)(void* context, call_site& site) = nullptr;
  /// For a wrong-stream report only: which framework set the current stream on `device` and which
  /// others name another one ("set by torch, while cupy names 0x8000"); empty when all agree.
  std::string (*current_stream_answers)(void* context, int device) = nullptr;
  void* context = nullptr;
};

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_WORLD_HPP
