// The devices current_stream() and its scopes are given: checked against the process's device
// count (read once), and taken as given where CUDA is absent (src/current_stream_registry.hpp,
// resolve_device).
#include "current_stream_registry.hpp"
#include "stream_lifecycle.hpp"

#include <streamlike/error.hpp>

#include <cuda_runtime_api.h>

#include <atomic>
#include <limits>
#include <stdexcept>
#include <string>

namespace streamlike::detail::current {

std::atomic<int> devices_known{0};
std::atomic<bool> current_device_read{false};

static bool cuda_absent(const error& e) noexcept {
  return e.code() == cudaErrorInsufficientDriver || e.code() == cudaErrorNoDevice;
}

void check_device_slow(int device, const char* operation) {
  try {
    check_named_device(device, operation); // the range, or the error reading the count
  } catch (const error& e) {
    // No driver or no device: nothing can be launched anywhere, and the current streams are
    // bookkeeping that works without CUDA (the frameworks keep theirs too): taken as given.
    if (cuda_absent(e)) {
      (void)cudaGetLastError();
      // For good: a process without a driver or a device does not gain one. Every device passes
      // from now on, without asking CUDA (and failing) on each call.
      devices_known.store(std::numeric_limits<int>::max(), std::memory_order_relaxed);
      return;
    }
    throw;
  }
  devices_known.store(device_count(operation), std::memory_order_relaxed);
}

int device_of_or(stream_view stream, int otherwise) {
  try {
    return stream.device(); // capture-safe (the stream's context)
  } catch (const error& e) {
    if (!cuda_absent(e)) throw;
    (void)cudaGetLastError();
    return otherwise; // no CUDA to ask: taken as given, as the device is
  }
}

void throw_bad_device(int device, const char* operation) {
  throw std::invalid_argument(std::string("streamlike::") + operation + ": device must be a device ordinal (>= 0) or " +
                              "streamlike::current_device (-1), got " + std::to_string(device));
}

} // namespace streamlike::detail::current
