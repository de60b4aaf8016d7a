// streamlike/device_guard.hpp: make a device current for a scope, restore the previous one after.
#ifndef STREAMLIKE_DEVICE_GUARD_HPP
#define STREAMLIKE_DEVICE_GUARD_HPP

#include <streamlike/detail/export.hpp>
#include <streamlike/stream_view.hpp>

namespace streamlike {

/// Makes `device` (or a stream's device) current and restores the previously current device on
/// destruction, also when an exception passes. Calls cudaSetDevice only when the device differs.
/// The constructor throws streamlike::error if either call fails; the destructor never throws.
class STREAMLIKE_API device_guard {
public:
  /// Makes `device` current.
  explicit device_guard(int device);
  /// Makes the stream's device current (stream_view::device(): the stream's context, capture-safe;
  /// the default streams: the current device).
  explicit device_guard(stream_view stream);
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;
  ~device_guard();

  /// The device that was current before, made current again on destruction.
  [[nodiscard]] int previous() const noexcept { return previous_; }
  /// The device this guard made current.
  [[nodiscard]] int current() const noexcept { return current_; }

private:
  int previous_ = -1;
  int current_ = -1;
};

} // namespace streamlike

#endif // STREAMLIKE_DEVICE_GUARD_HPP
