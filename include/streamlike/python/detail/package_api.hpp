// streamlike/python/detail/package_api.hpp: the streamlike package's C API
// (streamlike/c/package_api.h, the capsule `streamlike._streamlike._C_API`) as the casters find it
// and keep it, so that every extension module built on them returns the package's
// `streamlike.Stream`, reads its `Stream` and `StreamView` without a Python call, and reaches its
// current-stream table (docs/python-package.md, "One type across modules").
#ifndef STREAMLIKE_PYTHON_DETAIL_PACKAGE_API_HPP
#define STREAMLIKE_PYTHON_DETAIL_PACKAGE_API_HPP

#include <streamlike/c/package_api.h>
#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/stream_object.hpp>

#include <atomic>
#include <cstdlib>

namespace streamlike::python::detail {

using package_api = streamlike_package_api;

inline constexpr const char* package_api_capsule = STREAMLIKE_PACKAGE_API_CAPSULE;

/// Where this module keeps the package's API once found, for the life of the process (the package's
/// module is never unloaded); empty until then.
inline std::atomic<const package_api*>& package_api_slot() noexcept {
  static std::atomic<const package_api*> slot{nullptr};
  return slot;
}

/// The package's API if this module has found it already, else nullptr: one load, no look-up (what
/// the readers ask on every argument).
[[nodiscard]] inline const package_api* known_package_api() noexcept {
  return package_api_slot().load(std::memory_order_acquire);
}

/// Keeps `api` if its layout is this header's (the version, and the prefix a module fills in);
/// returns it then, else nullptr. The package itself keeps its own API this way.
inline const package_api* keep_package_api(const package_api* api) noexcept {
  if (api == nullptr || api->layout_version != STREAMLIKE_PACKAGE_API_VERSION ||
      api->stream_object_size != sizeof(stream_object) || api->stream_type == nullptr || api->view_type == nullptr) {
    return nullptr;
  }
  package_api_slot().store(api, std::memory_order_release);
  return api;
}

/// The package's API, importing the package where it is not loaded yet; nullptr, with no Python
/// exception set, where it cannot be imported or its layout is another. The GIL must be held.
[[nodiscard]] inline const package_api* import_package_api() noexcept {
  if (const package_api* known = known_package_api()) return known;
  const auto* api = static_cast<const package_api*>(PyCapsule_Import(package_api_capsule, 0));
  if (api == nullptr) {
    PyErr_Clear(); // not installed (or not importable)
    return nullptr;
  }
  return keep_package_api(api);
}

/// The package's API where the package is loaded already; never imports it (only a module already
/// in sys.modules is asked). The GIL must be held.
[[nodiscard]] inline const package_api* loaded_package_api() noexcept {
  if (const package_api* known = known_package_api()) return known;
  // The size of sys.modules at the last miss: the package cannot have arrived while it is the same
  // (imports only add), so a miss costs one size read, not a dictionary lookup.
  static std::atomic<Py_ssize_t> missed_at{-1};
  PyObject* modules = PyImport_GetModuleDict(); // borrowed
  if (modules == nullptr) return nullptr;
  const Py_ssize_t size = PyDict_Size(modules);
  if (size == missed_at.load(std::memory_order_relaxed)) return nullptr;
  if (PyDict_GetItemString(modules, "streamlike._streamlike") == nullptr) {
    missed_at.store(size, std::memory_order_relaxed);
    return nullptr;
  }
  return import_package_api(); // loaded: the import only looks it up
}

/// The package's Stream type (a new reference) when the package can be imported and shares this
/// header's layout; nullptr otherwise, with no Python exception set. Imports the package: the GIL
/// must be held. STREAMLIKE_PYTHON_LOCAL_TYPE=1 in the environment keeps each module's own type.
[[nodiscard]] inline PyTypeObject* package_stream_type() noexcept {
  const char* local = std::getenv("STREAMLIKE_PYTHON_LOCAL_TYPE");
  if (local != nullptr && local[0] != '\0' && !(local[0] == '0' && local[1] == '\0')) return nullptr;
  const package_api* api = import_package_api();
  if (api == nullptr) return nullptr;
  Py_INCREF(api->stream_type);
  return api->stream_type;
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_PACKAGE_API_HPP
