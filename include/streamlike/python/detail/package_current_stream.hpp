// streamlike/python/detail/package_current_stream.hpp: the caller's current stream as a Python
// binding sees it (this module's copy of libstreamlike, then the streamlike package's, through its
// C API), and the streamlike.CURRENT sentinel: what the casters read for a stream argument given
// as streamlike.CURRENT (docs/current-stream.md, "Python").
#ifndef STREAMLIKE_PYTHON_DETAIL_PACKAGE_CURRENT_STREAM_HPP
#define STREAMLIKE_PYTHON_DETAIL_PACKAGE_CURRENT_STREAM_HPP

#include <streamlike/c/current_stream_provider.h>
#include <streamlike/c/current_stream_registry.h>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_check.hpp>
#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/package_api.hpp>
#include <streamlike/stream_view.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace streamlike::python {

/// The table the streamlike package exports in its C API (streamlike/c/package_api.h,
/// `current_stream`; the table is streamlike/c/current_stream_provider.h's): its copy of
/// libstreamlike's current stream, with the package's `use` scopes and CuPy's provider in it,
/// reachable from C.
using package_current_stream_api = streamlike_current_stream_api;

namespace detail {

/// Whether the calling thread can call Python now: it has an attached thread state (it holds the
/// GIL; in the free-threaded build, it is attached). Not PyGILState_Check, which answers 1 for every
/// thread once a subinterpreter exists. Never takes the GIL.
[[nodiscard]] inline bool thread_can_call_python() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
  return PyThreadState_GetUnchecked() != nullptr; // this thread's attached thread state
#else
  // Before 3.13 (3.11: a process-wide variable) the unchecked getter names the thread state that
  // holds the GIL, whichever thread it belongs to: this thread holds it when that is its own.
  PyThreadState* const mine = PyGILState_GetThisThreadState();
  return mine != nullptr && mine == _PyThreadState_UncheckedGet();
#endif
}

/// The package's current-stream table (in its C API, package_api.hpp), or nullptr when the
/// package is not loaded (never imports it). Needs the GIL.
[[nodiscard]] inline const package_current_stream_api* package_current_stream() noexcept {
  const package_api* api = loaded_package_api();
  if (api == nullptr) return nullptr;
  const package_current_stream_api* table = api->current_stream;
  // Major 1, any minor: every field this header calls is in minor 0 (a later minor only appends).
  if (table == nullptr || table->major_version != STREAMLIKE_CURRENT_STREAM_API_MAJOR_VERSION) return nullptr;
  return table;
}

/// Whether the package's copy and this module's use one registry (docs/current-stream.md, "One
/// registry per process"): then this copy's answer is the package's, and nothing need ask it.
[[nodiscard]] inline bool shares_registry(const package_current_stream_api* api) noexcept {
  return api != nullptr && api->minor_version >= 1 && api->registry == streamlike_current_stream_registry_table();
}

/// Whether the current-stream check is on for this module's check sites: its own copy's switch
/// (its STREAMLIKE_CHECK_CURRENT_STREAM or its own call), or the package's (Python's
/// streamlike.set_current_stream_check), read through the package's table. GIL held.
[[nodiscard]] inline bool check_active() noexcept {
  if (streamlike::detail::current_stream_check_on.load(std::memory_order_relaxed)) return true;
  const package_current_stream_api* api = package_current_stream();
  return api != nullptr && api->check_enabled() != 0;
}

/// The caller's current stream on the current device: this module's copy of libstreamlike, then
/// the package's when this one names only a default stream. Throws as current_stream() does.
[[nodiscard]] inline stream_view current_stream_for_python() {
  const stream_view mine = streamlike::current_stream();
  if (!mine.is_default()) return mine;
  if (const package_current_stream_api* api = package_current_stream(); api != nullptr && !shares_registry(api)) {
    void* theirs = nullptr;
    if (api->get(-1, &theirs) == STREAMLIKE_CURRENT_STREAM_OK && theirs != nullptr)
      return stream_view{static_cast<cudaStream_t>(theirs)};
  }
  return mine;
}

/// The package's answer as a provider of this module's copy (link_package_current_stream). Needs
/// the GIL (else: unavailable); never asks the package from inside the package's own answer.
/// Set while this thread is inside a call into the package's table: the package's copy may be
/// this very copy, whose provider must not call itself.
inline thread_local bool inside_package_call = false;

inline int package_provider_get(void*, int32_t device, void** stream) {
  if (!thread_can_call_python() || inside_package_call) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
  const package_current_stream_api* api = package_current_stream();
  if (api == nullptr) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
  inside_package_call = true;
  const int status = api->get(device, stream);
  inside_package_call = false;
  return status;
}

/// A scope of this module's copy enters the package's copy too (its own slot, which its `use`
/// blocks and current_stream() read, and CuPy's provider, which only it has): through the table's
/// set, on a thread that can call Python; elsewhere unavailable (skipped).
inline int package_provider_enter(void*, int32_t device, void* stream, void** token) {
  if (!thread_can_call_python() || inside_package_call) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
  const package_current_stream_api* api = package_current_stream();
  if (api == nullptr) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
  inside_package_call = true;
  const int status = api->set(device, stream, token);
  inside_package_call = false;
  return status;
}

/// Leaves what package_provider_enter entered (same thread, reverse order: the scope's contract).
inline int package_provider_leave(void*, int32_t, void* token) {
  const package_current_stream_api* api = package_current_stream();
  if (api == nullptr) return STREAMLIKE_CURRENT_STREAM_FAILED;
  inside_package_call = true;
  const int status = api->restore(token);
  inside_package_call = false;
  return status;
}

/// True for streamlike.CURRENT: an object whose type has `__streamlike_current_stream__`.
[[nodiscard]] inline bool is_current_sentinel(PyObject* obj) noexcept {
  PyTypeObject* type = Py_TYPE(obj);
  if (std::strcmp(type->tp_name, "CurrentStream") != 0) return false; // cheap first look
  const int has = PyObject_HasAttrString(reinterpret_cast<PyObject*>(type), "__streamlike_current_stream__");
  return has == 1;
}

} // namespace detail

} // namespace streamlike::python

#endif // STREAMLIKE_PYTHON_DETAIL_PACKAGE_CURRENT_STREAM_HPP
