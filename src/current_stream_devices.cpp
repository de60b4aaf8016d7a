// The devices current_stream() and its scopes are given: checked against the process's device
// count (src/devices.hpp), and taken as given where CUDA is absent (src/current_stream_registry.hpp,
// resolve_device).
#include "current_stream_registry.hpp"
#include "devices.hpp"

#include <streamlike/error.hpp>

#include <cuda_runtime_api.h>

#include <atomic>
#include <stdexcept>
#include <string>

namespace streamlike::detail::current {

std::atomic<bool> current_device_read{false};

void check_device_slow(int device, const char* operation) {
  // No driver or no device: nothing can be launched anywhere, and the current streams are
  // bookkeeping that works without CUDA (the frameworks keep theirs too): taken as given.
  if (devices::cuda_absent(devices::try_count().error)) return;
  devices::check_named(device, operation); // the range, or the error reading the count
}

int device_of_or(stream_view stream, int otherwise) {
  try {
    return stream.device(); // capture-safe (the stream's context)
  } catch (const error& e) {
    if (!devices::cuda_absent(e.code())) throw;
    (void)cudaGetLastError();
    return otherwise; // no CUDA to ask: taken as given, as the device is
  }
}

void throw_bad_device(int device, const char* operation) {
  throw std::invalid_argument(std::string("streamlike::") + operation + ": device must be a device ordinal (>= 0) or " +
                              "streamlike::current_device (-1), got " + std::to_string(device));
}

} // namespace streamlike::detail::current
