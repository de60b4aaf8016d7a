// streamlike/python/current_stream.hpp: a stream parameter that defaults to the caller's current
// stream (docs/current-stream.md, "Python").
//
//   #include <streamlike/python/nanobind_current_stream.hpp>   // or pybind11_current_stream.hpp
//   void launch(const Array& a, streamlike::python::stream_or_current s) {
//     kernel<<<grid, block, 0, s.view>>>(...);
//   }
//   m.def("launch", &launch, nb::arg("a"), nb::arg("stream") = nb::none());
//
//   launch(a)                          # the current stream: inside torch.cuda.stream(x), x; inside
//                                      # `with streamlike.use(y):`, y
//   launch(a, stream=streamlike.CURRENT)  # the same, said explicitly
//   launch(a, stream=s)                # s (any object with __cuda_stream__)
//
// The current stream is streamlike::current_stream() of the module's own copy of libstreamlike
// (torch, tvm-ffi: their own current streams); when that names no stream but a default one and
// the streamlike package is loaded, the package answers too (its `use` scopes and CuPy's current
// stream, which only the package can read); link_package_current_stream() makes the module's own
// C++ calls to current_stream() see them too. An explicit stream is checked against the current one
// when the check is on (streamlike/current_stream_check.hpp), the call site being the Python
// caller's file and line.
#ifndef STREAMLIKE_PYTHON_CURRENT_STREAM_HPP
#define STREAMLIKE_PYTHON_CURRENT_STREAM_HPP

#include <streamlike/c/current_stream_provider.h>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/decode_stream.hpp>
#include <streamlike/python/detail/outcome.hpp>
#include <streamlike/python/detail/translate_exceptions.hpp>
#include <streamlike/stream_view.hpp>

#include <atomic>
#include <cstring>

namespace streamlike::python {

/// A stream argument: the stream given, or the caller's current stream for None and
/// streamlike.CURRENT. Converts to stream_view.
struct stream_or_current {
  stream_view view = stream_view::legacy_default();
  /// True when the caller gave no stream (None or streamlike.CURRENT).
  bool was_current = false;

  constexpr operator stream_view() const noexcept { return view; }
};

/// The table the streamlike package exports in the capsule `streamlike._streamlike._current_stream_api`
/// (streamlike/c/current_stream_provider.h): its copy of libstreamlike's current stream, with the
/// package's `use` scopes and CuPy's provider in it, reachable from C.
using package_current_stream_api = streamlike_current_stream_api;

inline constexpr const char* package_current_stream_capsule = STREAMLIKE_CURRENT_STREAM_API_CAPSULE;

namespace detail {

/// Whether the calling thread can call Python now: it has an attached thread state (it holds the
/// GIL; in the free-threaded build, it is attached). Not PyGILState_Check, which answers 1 for every
/// thread once a subinterpreter exists. Never takes the GIL.
[[nodiscard]] inline bool thread_can_call_python() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
  return PyThreadState_GetUnchecked() != nullptr;
#else
  return _PyThreadState_UncheckedGet() != nullptr;
#endif
}

/// The package's API, or nullptr when the package is not loaded (never imports it: only a
/// module already in sys.modules is asked). Cached once found. Needs the GIL.
[[nodiscard]] inline const package_current_stream_api* package_current_stream() noexcept {
  static std::atomic<const package_current_stream_api*> found{nullptr};
  if (const package_current_stream_api* api = found.load(std::memory_order_acquire)) return api;
  PyObject* modules = PyImport_GetModuleDict(); // borrowed
  if (modules == nullptr || PyDict_GetItemString(modules, "streamlike._streamlike") == nullptr) return nullptr;
  auto* api = static_cast<const package_current_stream_api*>(PyCapsule_Import(package_current_stream_capsule, 0));
  // Version 1's fields, all of which this header calls; a later version only appends.
  if (api == nullptr || api->version < 1 || api->struct_size < sizeof(package_current_stream_api)) {
    PyErr_Clear();
    return nullptr;
  }
  found.store(api, std::memory_order_release);
  return api;
}

/// The caller's current stream on the current device: this module's copy of libstreamlike, then
/// the package's when this one names only a default stream. Throws as current_stream() does.
[[nodiscard]] inline stream_view current_stream_for_python() {
  const stream_view mine = streamlike::current_stream();
  if (!mine.is_default()) return mine;
  if (const package_current_stream_api* api = package_current_stream()) {
    void* theirs = nullptr;
    if (api->get(-1, &theirs) == STREAMLIKE_CURRENT_STREAM_OK && theirs != nullptr)
      return stream_view{static_cast<cudaStream_t>(theirs)};
  }
  return mine;
}

/// The package's answer as a provider of this module's copy (link_package_current_stream). Needs
/// the GIL (else: unavailable); never asks the package from inside the package's own answer.
inline int package_provider_get(void*, int32_t device, void** stream) {
  if (!thread_can_call_python()) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
  static thread_local bool inside = false; // the package's copy may be this very copy
  if (inside) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
  const package_current_stream_api* api = package_current_stream();
  if (api == nullptr) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
  inside = true;
  const int status = api->get(device, stream);
  inside = false;
  return status;
}

/// True for streamlike.CURRENT: an object whose type has `__streamlike_current_stream__`.
[[nodiscard]] inline bool is_current_sentinel(PyObject* obj) noexcept {
  PyTypeObject* type = Py_TYPE(obj);
  if (std::strcmp(type->tp_name, "CurrentStream") != 0) return false; // cheap first look
  const int has = PyObject_HasAttrString(reinterpret_cast<PyObject*>(type), "__streamlike_current_stream__");
  return has == 1;
}

/// The stream_or_current argument `obj`.
[[nodiscard]] inline outcome decode_stream_or_current(PyObject* obj, bool convert, stream_or_current& out) noexcept {
  if (obj == Py_None || is_current_sentinel(obj)) {
    return translate_exceptions(outcome::failed, [&] {
      out = stream_or_current{current_stream_for_python(), true};
      return outcome::ok;
    });
  }
  stream_view view = stream_view::legacy_default();
  const outcome o = decode_view(obj, convert, view); // checks it when the check is on
  if (o == outcome::ok) out = stream_or_current{view, false};
  return o;
}

} // namespace detail

/// Registers the streamlike package's answer as a current-stream provider of this module's copy of
/// libstreamlike ("streamlike-package", asked just before streamlike's own), so that C++ code that
/// calls streamlike::current_stream() in this module also sees `with streamlike.use(...)` blocks
/// and CuPy's current stream, which live in the package's copy. Call it from the module's init,
/// after importing streamlike (GIL held). False when the package is not loaded; true when linked
/// (also when it already was). The provider answers only on threads holding the GIL.
inline bool link_package_current_stream() {
  if (detail::package_current_stream() == nullptr) return false;
  streamlike_current_stream_provider table{};
  table.version = STREAMLIKE_CURRENT_STREAM_PROVIDER_VERSION;
  table.struct_size = sizeof table;
  table.priority = STREAMLIKE_CURRENT_STREAM_PRIORITY_STREAMLIKE - 1;
  table.name = "streamlike-package";
  table.get = &detail::package_provider_get;
  for (const auto& p : streamlike::current_stream_providers())
    if (p.name == table.name) return true;
  streamlike::register_current_stream_provider(table);
  return true;
}

} // namespace streamlike::python

#endif // STREAMLIKE_PYTHON_CURRENT_STREAM_HPP
