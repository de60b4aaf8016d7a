// _streamlike: the extension module of the `streamlike` Python package (docs/python-package.md),
// a face of the library: each type's file binds it (package.hpp lists them), and this file only
// calls them. StreamView and Stream are plain CPython types (vectorcall construction; Stream's
// layout is shared with every module built on the casters); the rest are nanobind classes.
#include "package.hpp"

#include <streamlike/error.hpp>

namespace {
// The wheels are built per CUDA major (docs/python-package.md, "Binary wheels"): a driver too old
// for this one's runtime may run another's.
const char* wheel_for_driver(int driver_major) noexcept {
  return driver_major == 12 ? "install streamlike-cu12, the package built for CUDA 12 drivers" : nullptr;
}
} // namespace

NB_MODULE(_streamlike, m) {
  // Free-threaded builds: no state here relies on the GIL (the facts caches are atomic, the
  // library is thread-safe).
  namespace pkg = streamlike_package;
  pkg::bind_view(m);
  pkg::bind_stream(m);
  pkg::bind_event(m);
  pkg::bind_pool(m);
  pkg::bind_partition(m);
  pkg::bind_capture(m);
  pkg::bind_functions(m);
  pkg::bind_current_stream(m);
  streamlike::detail::set_older_driver_advice(&wheel_for_driver);
}
