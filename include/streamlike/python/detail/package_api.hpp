// streamlike/python/detail/package_api.hpp: the C API the `streamlike` Python package exports as
// the capsule `streamlike._streamlike._C_API` (as numpy exports `_ARRAY_API`), so that every
// extension module built on the casters returns the package's `streamlike.Stream` type instead of
// a type of its own (docs/python-package.md, "One type across modules").
#ifndef STREAMLIKE_PYTHON_DETAIL_PACKAGE_API_HPP
#define STREAMLIKE_PYTHON_DETAIL_PACKAGE_API_HPP

#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/stream_object.hpp>

#include <cstdlib>

namespace streamlike::python::detail {

/// Bumped whenever stream_object's layout or what its fields mean changes: a module built
/// against another layout keeps its own type.
inline constexpr unsigned stream_object_layout_version = 1;

/// What the capsule points to. The package's Stream objects start with a stream_object (a module
/// fills one in with tp_alloc and placement new, as for its own type); the package's fields after
/// it are zero when a module makes the object.
struct package_api {
  unsigned layout_version;   // stream_object_layout_version of the package
  unsigned object_size;      // sizeof(stream_object) in the package: the prefix modules may fill
  PyTypeObject* stream_type; // streamlike.Stream, alive while the package module is
};

inline constexpr const char* package_api_capsule = "streamlike._streamlike._C_API";

/// The package's Stream type (a new reference) when the package can be imported and shares this
/// header's layout; nullptr otherwise, with no Python exception set. Imports the package: the GIL
/// must be held. STREAMLIKE_PYTHON_LOCAL_TYPE=1 in the environment keeps each module's own type.
[[nodiscard]] inline PyTypeObject* package_stream_type() noexcept {
  const char* local = std::getenv("STREAMLIKE_PYTHON_LOCAL_TYPE");
  if (local != nullptr && local[0] != '\0' && !(local[0] == '0' && local[1] == '\0')) return nullptr;
  const auto* api = static_cast<const package_api*>(PyCapsule_Import(package_api_capsule, 0));
  if (api == nullptr) {
    PyErr_Clear(); // not installed (or not importable): the module's own type serves
    return nullptr;
  }
  if (api->layout_version != stream_object_layout_version || api->object_size != sizeof(stream_object) ||
      api->stream_type == nullptr) {
    return nullptr;
  }
  Py_INCREF(api->stream_type);
  return api->stream_type;
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_PACKAGE_API_HPP
