// CuPy's current-stream provider (docs/current-stream.md, "Providers"), registered by the package
// once `cupy` is imported (register_cupy_if_loaded, package.hpp).
#include "package.hpp"
#include "use_entry.hpp"

#include <nanobind/nanobind.h>

#include <streamlike/c/current_stream_provider.h>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/device_guard.hpp>
#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/saved_error.hpp>
#include <streamlike/python/detail/package_current_stream.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>

using streamlike::stream_view;

namespace streamlike_package {

namespace {

// --- CuPy's provider ---------------------------------------------------------------------------
// CuPy keeps its current stream per thread and device in Python objects
// (cupy.cuda.get_current_stream(device_id), Stream.use()), reachable only through Python: the
// provider runs only on a thread that can call Python now (an attached thread state), and answers
// STREAMLIKE_CURRENT_STREAM_UNAVAILABLE elsewhere (it never takes the GIL itself, which could
// deadlock a thread that waits for this one while holding it). Registered by this module once
// `cupy` is in sys.modules.
//
// A scope enters and leaves by token, as CuPy's own `with stream:` does: enter reads CuPy's current
// stream object and enters the scope's stream object (Stream.null for the legacy default stream,
// the per-thread default stream's object for 0x2, else CuPy's object for the handle), which
// pushes it on CuPy's per-thread, per-device stack of `with` blocks; the token keeps both objects.
// Leave exits the scope's object (popping the stack) and makes the very object that was current
// before current again: CuPy's exit does where that object came from a block, use() where not.
// Entering as `with` does, not by use(), is what lets an inner CuPy block end well: CuPy's block
// exit makes the top of its stack current, which use() never changes.
// Nothing is cached and nothing outlives the scope.
//
// CuPy's object for a handle: Stream.from_external(obj) where CuPy has it (CuPy 14 deprecates
// ExternalStream for it); it takes any __cuda_stream__ object, so it is handed the use block's own
// stream object (a streamlike one as it is, any other in a StreamView that holds it; the CuPy
// object may then keep it alive) or, for a C++ scope, a StreamView of the handle. Where CuPy has only ExternalStream(handle, device), it is called with its
// DeprecationWarning ignored around that one call: no streamlike call emits a warning of CuPy's,
// which under `python -W error` would be an exception.
//
// A provider answers the registry by status only; the Python error behind a failure is kept for
// the use block being entered on this thread (provider_failure), which raises the registry's
// error from it, so the caller sees why CuPy refused.

struct cupy_functions {
  PyObject* get_current_stream = nullptr; // cupy.cuda.get_current_stream
  PyObject* from_external = nullptr;      // cupy.cuda.Stream.from_external where CuPy has it, else nullptr
  PyObject* external_stream = nullptr;    // cupy.cuda.ExternalStream, where from_external is missing
  PyObject* catch_warnings = nullptr;     // warnings.catch_warnings and warnings.simplefilter: with
  PyObject* simplefilter = nullptr;       // external_stream only, to ignore its DeprecationWarning
  PyObject* null_stream = nullptr;        // cupy.cuda.Stream.null: CuPy's name for the legacy default stream
  PyObject* per_thread_stream = nullptr;  // cupy.cuda.Stream.ptds where CuPy has it, else nullptr
};

// Written once, by the thread that registers the provider, before the provider is published (the
// registry's publication orders them before any call); strong references for the life of the
// process. Resolved with no lock held, as torch's functions are (below, resolve_torch).
cupy_functions cupy;
std::mutex cupy_registering; // held only to register: no Python inside
std::atomic<bool> cupy_registered{false};

/// CuPy's current stream object on `device` (a new reference), or nullptr with an error set.
PyObject* cupy_current(int32_t device) noexcept {
  sd::scoped_ref device_obj = sd::scoped_ref::steal(PyLong_FromLong(device));
  if (!device_obj) return nullptr;
  return PyObject_CallOneArg(cupy.get_current_stream, device_obj.get());
}

int cupy_get(void*, int32_t device, void** stream) {
  if (!streamlike::python::detail::thread_can_call_python()) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
  const python_error_guard keep;
  sd::scoped_ref current = sd::scoped_ref::steal(cupy_current(device));
  if (!current) return STREAMLIKE_CURRENT_STREAM_FAILED;
  sd::scoped_ref ptr = sd::scoped_ref::steal(PyObject_GetAttrString(current.get(), "ptr"));
  if (!ptr) return STREAMLIKE_CURRENT_STREAM_FAILED;
  void* handle = PyLong_AsVoidPtr(ptr.get());
  if (handle == nullptr && PyErr_Occurred() != nullptr) return STREAMLIKE_CURRENT_STREAM_FAILED;
  *stream = handle;
  return STREAMLIKE_CURRENT_STREAM_OK;
}

/// `call()` (a new reference, or nullptr with an error set) with `device` current, as CuPy requires
/// of use() and `with` (the library's device_guard); where CUDA is absent the device cannot be made
/// current and CuPy has no device either: called as is. False with an error set.
template <class Call>
bool call_on_device(int32_t device, Call&& call) noexcept {
  std::optional<streamlike::device_guard> on_device;
  try {
    on_device.emplace(static_cast<int>(device));
  } catch (const streamlike::error& e) {
    // No driver or no device: nothing to make current (the library's error left no CUDA error behind).
    if (e.code() != cudaErrorInsufficientDriver && e.code() != cudaErrorNoDevice) return false;
  } catch (...) {
    return false;
  }
  return static_cast<bool>(sd::scoped_ref::steal(call()));
}

/// cupy.cuda.ExternalStream(handle, device) with its DeprecationWarning ignored around this call
/// alone (warnings.catch_warnings restores the filters, also when the call raises).
PyObject* external_stream_quietly(int32_t device, void* stream) noexcept {
  sd::scoped_ref quiet = sd::scoped_ref::steal(PyObject_CallNoArgs(cupy.catch_warnings));
  if (!quiet) return nullptr;
  sd::scoped_ref entered = sd::scoped_ref::steal(PyObject_CallMethod(quiet.get(), "__enter__", nullptr));
  if (!entered) return nullptr;
  sd::scoped_ref ignored =
      sd::scoped_ref::steal(PyObject_CallFunction(cupy.simplefilter, "sO", "ignore", PyExc_DeprecationWarning));
  PyObject* made = nullptr;
  if (ignored) {
    made = PyObject_CallFunction(cupy.external_stream, "Ki",
                                 static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(stream)),
                                 static_cast<int>(device));
  }
  sd::saved_error raised = sd::saved_error::fetch();
  sd::scoped_ref left =
      sd::scoped_ref::steal(PyObject_CallMethod(quiet.get(), "__exit__", "OOO", Py_None, Py_None, Py_None));
  if (!left) {
    Py_XDECREF(made);
    return nullptr; // the filters could not be restored: that error, not the call's
  }
  raised.restore();
  return made;
}

/// CuPy's object for `stream` on `device` (a new reference): its own default streams' objects for
/// the default streams, else Stream.from_external of the entering block's stream object (or of a
/// StreamView of the handle), or a quiet ExternalStream where CuPy lacks from_external.
PyObject* cupy_object_for(int32_t device, void* stream) noexcept {
  if (stream == nullptr || stream == static_cast<void*>(cudaStreamLegacy)) {
    Py_INCREF(cupy.null_stream);
    return cupy.null_stream;
  }
  if (stream == static_cast<void*>(cudaStreamPerThread) && cupy.per_thread_stream != nullptr) {
    Py_INCREF(cupy.per_thread_stream);
    return cupy.per_thread_stream;
  }
  if (cupy.from_external == nullptr) return external_stream_quietly(device, stream);
  // A streamlike Stream or StreamView goes as it is; any other object (it may offer only
  // __cuda_stream_owned__) in a StreamView that keeps it alive.
  PyObject* object = entering.handle == stream ? entering.object : nullptr;
  sd::scoped_ref exporter =
      object != nullptr && (streamlike_package::is_stream(object) || streamlike_package::is_view(object))
          ? sd::scoped_ref::borrow(object)
          : sd::scoped_ref::steal(streamlike_package::new_view(stream_view{static_cast<cudaStream_t>(stream)}, object,
                                                               streamlike_package::source_streamlike));
  if (!exporter) return nullptr;
  return PyObject_CallOneArg(cupy.from_external, exporter.get());
}

int cupy_enter(void*, int32_t device, void* stream, void** token) {
  if (!streamlike::python::detail::thread_can_call_python()) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
  const python_error_guard keep;
  sd::scoped_ref previous = sd::scoped_ref::steal(cupy_current(device)); // the very object, put back by leave
  if (!previous) return STREAMLIKE_CURRENT_STREAM_FAILED;
  // (previous, target), made before CuPy's block is entered so that nothing can fail after it.
  PyObject* entered = PyTuple_New(2);
  if (entered == nullptr) return STREAMLIKE_CURRENT_STREAM_FAILED;
  Py_INCREF(previous.get());
  PyTuple_SET_ITEM(entered, 0, previous.get()); // steals
  // The target is made on its device too: CuPy gives an object made from a handle the current device.
  const bool entered_block = call_on_device(device, [&]() -> PyObject* {
    PyObject* target = cupy_object_for(device, stream);
    if (target == nullptr) return nullptr;
    PyTuple_SET_ITEM(entered, 1, target); // steals
    return PyObject_CallMethod(target, "__enter__", nullptr);
  });
  if (!entered_block) {
    Py_DECREF(entered);
    return STREAMLIKE_CURRENT_STREAM_FAILED;
  }
  *token = entered; // the token's reference, dropped by leave
  return STREAMLIKE_CURRENT_STREAM_OK;
}

int cupy_leave(void*, int32_t device, void* token) {
  // Left on the thread that entered, which could call Python then; a thread that cannot now
  // (its thread state detached meanwhile) keeps the token: the objects are leaked, never used unsafely.
  if (!streamlike::python::detail::thread_can_call_python()) return STREAMLIKE_CURRENT_STREAM_UNAVAILABLE;
  const python_error_guard keep;
  sd::scoped_ref entered = sd::scoped_ref::steal(static_cast<PyObject*>(token));
  PyObject* previous = PyTuple_GET_ITEM(entered.get(), 0);
  PyObject* target = PyTuple_GET_ITEM(entered.get(), 1);
  const bool left =
      call_on_device(device, [&] { return PyObject_CallMethod(target, "__exit__", "OOO", Py_None, Py_None, Py_None); });
  if (left) {
    // CuPy's block exit makes the top of its stack current: the object before, unless that one was
    // made current by use() (not by a block), which only use() puts back.
    sd::scoped_ref now = sd::scoped_ref::steal(cupy_current(device));
    if (!now) return STREAMLIKE_CURRENT_STREAM_FAILED;
    if (now.get() == previous) return STREAMLIKE_CURRENT_STREAM_OK;
  }
  const bool restored = call_on_device(device, [&] { return PyObject_CallMethod(previous, "use", nullptr); });
  return left && restored ? STREAMLIKE_CURRENT_STREAM_OK : STREAMLIKE_CURRENT_STREAM_FAILED;
}

} // namespace

void register_cupy_if_loaded() noexcept {
  if (cupy_registered.load(std::memory_order_acquire)) return;
  static std::atomic<PyObject*> name_slot{nullptr};
  PyObject* name = sd::interned(name_slot, "cupy");
  if (name == nullptr) {
    PyErr_Clear();
    return;
  }
  const int loaded = PyDict_Contains(PyImport_GetModuleDict(), name);
  if (loaded != 1) {
    PyErr_Clear();
    return;
  }
  // CuPy's functions, found with no lock held (Python runs here).
  cupy_functions found;
  {
    const python_error_guard keep;
    sd::scoped_ref cuda = sd::scoped_ref::steal(PyImport_ImportModule("cupy.cuda"));
    if (!cuda) return; // asked again next time
    found.get_current_stream = PyObject_GetAttrString(cuda.get(), "get_current_stream");
    if (sd::scoped_ref stream_type = sd::scoped_ref::steal(PyObject_GetAttrString(cuda.get(), "Stream"))) {
      found.null_stream = PyObject_GetAttrString(stream_type.get(), "null");
      if (PyObject_HasAttrString(stream_type.get(), "ptds") == 1)
        found.per_thread_stream = PyObject_GetAttrString(stream_type.get(), "ptds");
      if (PyObject_HasAttrString(stream_type.get(), "from_external") == 1)
        found.from_external = PyObject_GetAttrString(stream_type.get(), "from_external");
    }
    if (found.from_external == nullptr) {
      found.external_stream = PyObject_GetAttrString(cuda.get(), "ExternalStream");
      if (sd::scoped_ref warnings = sd::scoped_ref::steal(PyImport_ImportModule("warnings"))) {
        found.catch_warnings = PyObject_GetAttrString(warnings.get(), "catch_warnings");
        found.simplefilter = PyObject_GetAttrString(warnings.get(), "simplefilter");
      }
    }
  }
  const auto drop = [](cupy_functions& f) {
    Py_XDECREF(f.get_current_stream);
    Py_XDECREF(f.from_external);
    Py_XDECREF(f.external_stream);
    Py_XDECREF(f.catch_warnings);
    Py_XDECREF(f.simplefilter);
    Py_XDECREF(f.null_stream);
    Py_XDECREF(f.per_thread_stream);
    f = {};
  };
  const bool makes_streams =
      found.from_external != nullptr ||
      (found.external_stream != nullptr && found.catch_warnings != nullptr && found.simplefilter != nullptr);
  if (found.get_current_stream == nullptr || found.null_stream == nullptr || !makes_streams) {
    drop(found);
    cupy_registered.store(true, std::memory_order_release); // not the CuPy this provider knows: no provider
    return;
  }
  bool kept = false;
  try {
    const std::lock_guard<std::mutex> lock(cupy_registering); // registration runs no Python
    if (!cupy_registered.load(std::memory_order_relaxed)) {
      cupy = found;
      kept = true;
      streamlike_current_stream_provider table = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
      table.priority = STREAMLIKE_CURRENT_STREAM_PRIORITY_CUPY;
      table.name = "cupy";
      table.get = &cupy_get;
      table.enter = &cupy_enter;
      table.leave = &cupy_leave;
      try {
        streamlike::register_current_stream_provider(table);
      } catch (...) {
        // registered already (by the application under that name): leave it
      }
      cupy_registered.store(true, std::memory_order_release);
    }
  } catch (...) {
    // The mutex could not be taken (a system error): asked again next time.
  }
  if (!kept) drop(found); // another thread registered first
}

} // namespace streamlike_package
