// streamlike/python/stream_type.hpp: the Python type `streamlike.Stream` of an extension module,
// what a C++ stream returned to Python becomes (docs/python-bridge.md).
#ifndef STREAMLIKE_PYTHON_STREAM_TYPE_HPP
#define STREAMLIKE_PYTHON_STREAM_TYPE_HPP

#include <streamlike/python/detail/package_api.hpp>
#include <streamlike/python/detail/stream_object.hpp>

#include <atomic>

namespace streamlike::python {

/// The type `streamlike.Stream` of this extension module, found or made on first use: the
/// `streamlike` package's own type when the package is importable (one type across modules:
/// detail/package_api.hpp), else one made for this module (the headers are compiled into each).
/// Requires: the GIL is held. Returns a borrowed reference that stays valid for the life of the
/// process, or nullptr with a Python exception set if the type cannot be made. Expose it with e.g.
/// `m.attr("Stream") = nb::handle((PyObject*) streamlike::python::stream_type())`.
[[nodiscard]] inline PyTypeObject* stream_type() noexcept {
  auto& slot = detail::stream_type_slot();
  PyTypeObject* type = slot.load(std::memory_order_acquire);
  if (type != nullptr) return type;
  type = detail::package_stream_type();
  if (type == nullptr) type = detail::make_stream_type();
  if (type == nullptr) return nullptr;
  PyTypeObject* expected = nullptr;
  if (!slot.compare_exchange_strong(expected, type, std::memory_order_acq_rel)) {
    Py_DECREF(type); // made concurrently (free-threaded build): keep the first
    type = expected;
  }
  return type; // one reference kept by the slot for the life of the process
}

} // namespace streamlike::python

#endif // STREAMLIKE_PYTHON_STREAM_TYPE_HPP
