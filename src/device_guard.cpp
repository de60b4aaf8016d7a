#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>

namespace streamlike {

device_guard::device_guard(int device) : current_(device) {
  detail::throw_if_error(cudaGetDevice(&previous_), "device_guard: cudaGetDevice");
  if (device != previous_) detail::throw_if_error(cudaSetDevice(device), "device_guard: cudaSetDevice");
}

device_guard::device_guard(stream_view stream) : device_guard(stream.device()) {}

device_guard::~device_guard() {
  if (current_ != previous_) {
    // Nothing to report to from a destructor; a failure here means the runtime is going away.
    if (cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
  }
}

} // namespace streamlike
