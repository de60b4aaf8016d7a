// streamlike/python/detail/to_python.hpp: C++ streams into streamlike.Stream objects, for the
// casters' return values.
#ifndef STREAMLIKE_PYTHON_DETAIL_TO_PYTHON_HPP
#define STREAMLIKE_PYTHON_DETAIL_TO_PYTHON_HPP

#include <streamlike/python/detail/stream_object.hpp>
#include <streamlike/python/stream_type.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <new>
#include <utility>

namespace streamlike::python::detail {

/// A new streamlike.Stream holding `owner` (may be empty: a view) and naming `handle`; nullptr
/// with a Python exception set on failure.
[[nodiscard]] inline PyObject* new_stream_object(shared_stream owner, cudaStream_t handle) noexcept {
  PyTypeObject* type = stream_type();
  if (type == nullptr) return nullptr;
  PyObject* self = type->tp_alloc(type, 0);
  if (self == nullptr) return nullptr;
  stream_object* s = as_stream_object(self);
  ::new (static_cast<void*>(&s->owner)) shared_stream(std::move(owner));
  s->handle = handle;
  return self;
}

/// A non-owning streamlike.Stream for a view.
[[nodiscard]] inline PyObject* to_python(stream_view view) noexcept {
  return new_stream_object(shared_stream{}, view.get());
}

/// An owning streamlike.Stream for a shared_stream, or None for an empty one.
[[nodiscard]] inline PyObject* to_python(shared_stream stream) noexcept {
  if (!stream) Py_RETURN_NONE;
  const cudaStream_t handle = stream.get(); // cannot throw: not empty
  return new_stream_object(std::move(stream), handle);
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_TO_PYTHON_HPP
