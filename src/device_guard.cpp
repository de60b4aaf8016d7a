#include "devices.hpp"
#include "nothrow_device_guard.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>

namespace streamlike {

namespace detail {

void restore_device(int previous, int current) noexcept {
  if (current != previous && cudaSetDevice(previous) != cudaSuccess) (void)cudaGetLastError();
}

nothrow_device_guard::nothrow_device_guard(int device) noexcept {
  // cudaErrorCudartUnloading (process exit) or a dead driver: leave everything as it is.
  previous_ = devices::current_or_minus_one();
  if (previous_ < 0) return;
  current_ = device >= 0 ? device : previous_;
  if (current_ != previous_ && cudaSetDevice(current_) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  ok_ = true;
}

} // namespace detail

device_guard::device_guard(int device) : current_(device) {
  previous_ = detail::devices::current("device_guard");
  if (device != previous_) detail::throw_if_error(cudaSetDevice(device), "device_guard: cudaSetDevice");
}

device_guard::device_guard(stream_view stream) : device_guard(stream.device()) {}

device_guard::~device_guard() { detail::restore_device(previous_, current_); }

} // namespace streamlike
