// device_guard's counterpart for code that must not throw (destructors, dispose()): the one
// place where a device is switched without throwing, and the one restore path, which
// device_guard's destructor uses too.
#ifndef STREAMLIKE_SRC_NOTHROW_DEVICE_GUARD_HPP
#define STREAMLIKE_SRC_NOTHROW_DEVICE_GUARD_HPP

namespace streamlike::detail {

/// Makes `current` current again if `previous` is not it, ignoring (and clearing) a failure:
/// there is nothing to report to, and a failure here means the runtime is going away.
void restore_device(int previous, int current) noexcept;

/// Makes `device` current for a scope (a negative device: stays on the current one) and restores
/// the previous device on destruction. Never throws: check it (`if (guard)`) before working on
/// the device; false when the runtime could not tell or switch the device (it is unloading at
/// process exit, or there is no driver), in which case nothing was changed.
class nothrow_device_guard {
public:
  explicit nothrow_device_guard(int device) noexcept;
  nothrow_device_guard(const nothrow_device_guard&) = delete;
  nothrow_device_guard& operator=(const nothrow_device_guard&) = delete;
  ~nothrow_device_guard() {
    if (ok_) restore_device(previous_, current_);
  }

  [[nodiscard]] explicit operator bool() const noexcept { return ok_; }

private:
  int previous_ = -1;
  int current_ = -1;
  bool ok_ = false;
};

} // namespace streamlike::detail

#endif // STREAMLIKE_SRC_NOTHROW_DEVICE_GUARD_HPP
