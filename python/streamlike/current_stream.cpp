// The current stream in the streamlike package (docs/current-stream.md): current_stream(), use,
// the provider list and conflicts, the check's switch, CuPy's provider, and the capsule through
// which other extension modules ask this copy of libstreamlike (streamlike/python/current_stream.hpp).
//
// bind_current_stream(m) adds them to the _streamlike module.
#include "package.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_check.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/python/current_stream.hpp>
#include <streamlike/python/detail/saved_error.hpp>
#include <streamlike/python/detail/translate_exceptions.hpp>
#include <streamlike/python/nanobind.hpp>

#include <streamlike/device_guard.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace nb = nanobind;
namespace sd = streamlike::python::detail;
using streamlike::stream_view;

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
// before current again (use()). Entering as `with` does, not by use(), is what lets an inner CuPy
// block end well: CuPy's block exit makes the top of its stack current, which use() never changes.
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

/// Where a provider's Python error goes while a use block is entered on this thread (the block
/// raises its error from it); nullptr elsewhere, where the error is dropped: a provider answers
/// the registry by status only.
thread_local sd::saved_error* provider_failure = nullptr;

/// Keeps and restores a pending Python exception around a provider's Python calls (the scope's
/// destructor may run while one propagates). An error the calls leave raised is handed to the use
/// block being entered (provider_failure), the first one only, else dropped.
class python_error_guard {
public:
  python_error_guard() noexcept : raised_(sd::saved_error::fetch()) {}
  ~python_error_guard() {
    if (provider_failure != nullptr && !*provider_failure && PyErr_Occurred() != nullptr) {
      *provider_failure = sd::saved_error::fetch();
    }
    PyErr_Clear();
    raised_.restore();
  }
  python_error_guard(const python_error_guard&) = delete;
  python_error_guard& operator=(const python_error_guard&) = delete;

private:
  sd::saved_error raised_;
};

/// With an exception raised, makes `cause` its __cause__ (`raise ... from cause`); with none
/// raised or no cause, changes nothing.
void raise_from(sd::saved_error cause) noexcept {
  if (!cause || PyErr_Occurred() == nullptr) return;
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* raised = PyErr_GetRaisedException();
  cause.restore();
  PyObject* why = PyErr_GetRaisedException();
#else
  PyObject *type = nullptr, *raised = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &raised, &traceback);
  PyErr_NormalizeException(&type, &raised, &traceback);
  if (raised != nullptr && traceback != nullptr) (void)PyException_SetTraceback(raised, traceback);
  cause.restore();
  PyObject *why_type = nullptr, *why = nullptr, *why_traceback = nullptr;
  PyErr_Fetch(&why_type, &why, &why_traceback);
  PyErr_NormalizeException(&why_type, &why, &why_traceback);
  if (why != nullptr && why_traceback != nullptr) (void)PyException_SetTraceback(why, why_traceback);
  Py_XDECREF(why_type);
  Py_XDECREF(why_traceback);
#endif
  if (raised != nullptr && why != nullptr) {
    Py_INCREF(why);
    PyException_SetCause(raised, why);   // steals one reference
    PyException_SetContext(raised, why); // steals the other
  } else {
    Py_XDECREF(why);
  }
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(raised);
#else
  PyErr_Restore(type, raised, traceback);
#endif
}

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

/// The use block being entered on this thread: its stream object (borrowed, for that entry only)
/// and handle, which CuPy's provider hands to Stream.from_external; and where a provider's Python
/// error goes (provider_failure).
struct entering_block {
  PyObject* object = nullptr;
  void* handle = nullptr;
};
thread_local entering_block entering;

/// Marks a use block's entry on this thread for its lifetime (see entering_block).
class use_entry {
public:
  use_entry(PyObject* object, stream_view stream, sd::saved_error& failure) noexcept
      : outer_(entering), outer_failure_(provider_failure) {
    entering = entering_block{object, static_cast<void*>(stream.get())};
    provider_failure = &failure;
  }
  ~use_entry() {
    entering = outer_;
    provider_failure = outer_failure_;
  }
  use_entry(const use_entry&) = delete;
  use_entry& operator=(const use_entry&) = delete;

private:
  entering_block outer_;
  sd::saved_error* outer_failure_;
};

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
  const bool restored = call_on_device(device, [&] { return PyObject_CallMethod(previous, "use", nullptr); });
  return left && restored ? STREAMLIKE_CURRENT_STREAM_OK : STREAMLIKE_CURRENT_STREAM_FAILED;
}

// --- Arguments and results ---------------------------------------------------------------------

/// `device`: None or absent (the current device) or an int >= 0, read by the package's
/// read_device. Sets a Python exception and returns false otherwise.
bool read_device_or_current(const char* function, PyObject* arg, int& device) noexcept {
  std::optional<int> ordinal;
  if (!streamlike_package::read_device(function, arg != nullptr ? arg : Py_None, ordinal)) return false;
  device = ordinal.value_or(streamlike::current_device);
  return true;
}

/// current_stream(device=None) -> StreamView
PyObject* py_current_stream(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) noexcept {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject* device_arg = nullptr;
  if (nargs + nkw > 1) {
    PyErr_Format(PyExc_TypeError, "current_stream() takes at most 1 argument (device), got %zd", nargs + nkw);
    return nullptr;
  }
  if (nargs == 1) device_arg = args[0];
  if (nkw == 1) {
    if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "device") != 0) {
      PyErr_Format(PyExc_TypeError, "current_stream() got an unexpected keyword argument '%U'",
                   PyTuple_GET_ITEM(kwnames, 0));
      return nullptr;
    }
    device_arg = args[0];
  }
  int device = 0;
  if (!read_device_or_current("current_stream", device_arg, device)) return nullptr;
  streamlike_package::register_cupy_if_loaded();
  std::optional<stream_view> current;
  try {
    current = streamlike::current_stream(device);
  } catch (...) {
    sd::set_error_from_current_exception();
    return nullptr;
  }
  return streamlike_package::new_view(*current, nullptr, "current");
}

// --- use ---------------------------------------------------------------------------------------

/// torch's current stream is a stream id beside the handle: the scope's torch provider makes the
/// handle current (an external stream, which does not compare equal to the torch.cuda.Stream it
/// came from). For a torch stream object, torch's own setter then makes the very object current,
/// so torch.cuda.current_stream() == s inside; leaving the scope's guard puts back what torch had
/// before, whatever is current then. Best effort: where torch refuses, torch keeps the handle.
/// Only where torch is already imported (never imports it).
///
/// torch.cuda.set_stream(s) is _set_stream_by_id(s.stream_id, s.device_index, s.device_type), two
/// Python frames around torch._C._cuda_setStream: resolved once (like CuPy's functions), the
/// setter is called directly with the object's three ids, about a microsecond less per block.
/// Where torch lacks it, torch.cuda.set_stream is called.
struct torch_functions {
  PyObject* stream_type = nullptr;      // torch.cuda.Stream
  PyObject* set_stream_by_id = nullptr; // torch._C._cuda_setStream(stream_id=, device_index=, device_type=)
  PyObject* id_names = nullptr;         // ("stream_id", "device_index", "device_type"): its keywords
  PyObject* set_stream = nullptr;       // torch.cuda.set_stream, where the above is missing
};

// Published once by `torch_resolved`; strong references for the life of the process. Resolved with no
// lock held: resolving runs Python, which may let another thread run, and a thread that waits for a
// lock while holding the GIL would then never let the resolver finish (the GIL is what it waits
// for). Threads that resolve at once each resolve; the first to publish wins, the others drop theirs.
torch_functions torch_api;
std::mutex torch_publishing; // held only to publish: no Python inside
std::atomic<bool> torch_resolved{false};

void drop(torch_functions& f) noexcept {
  Py_XDECREF(f.stream_type);
  Py_XDECREF(f.set_stream_by_id);
  Py_XDECREF(f.id_names);
  Py_XDECREF(f.set_stream);
  f = {};
}

bool resolve_torch() noexcept {
  if (torch_resolved.load(std::memory_order_acquire)) return torch_api.stream_type != nullptr;
  static std::atomic<PyObject*> name_slot{nullptr};
  PyObject* name = sd::interned(name_slot, "torch");
  if (name == nullptr || PyDict_Contains(PyImport_GetModuleDict(), name) != 1) {
    PyErr_Clear();
    return false; // not imported (yet): asked again next time
  }
  torch_functions found;
  {
    const python_error_guard keep;
    sd::scoped_ref torch = sd::scoped_ref::steal(PyImport_GetModule(name));
    sd::scoped_ref cuda = sd::scoped_ref::steal(torch ? PyObject_GetAttrString(torch.get(), "cuda") : nullptr);
    if (cuda) {
      found.stream_type = PyObject_GetAttrString(cuda.get(), "Stream");
      found.set_stream = PyObject_GetAttrString(cuda.get(), "set_stream");
    }
    PyErr_Clear();
    if (sd::scoped_ref c = sd::scoped_ref::steal(torch ? PyObject_GetAttrString(torch.get(), "_C") : nullptr))
      found.set_stream_by_id = PyObject_GetAttrString(c.get(), "_cuda_setStream");
    if (found.set_stream_by_id != nullptr) {
      found.id_names = Py_BuildValue("(sss)", "stream_id", "device_index", "device_type");
      if (found.id_names == nullptr) Py_CLEAR(found.set_stream_by_id); // torch.cuda.set_stream then
    }
    PyErr_Clear();
    if (found.stream_type == nullptr || (found.set_stream_by_id == nullptr && found.set_stream == nullptr))
      drop(found); // not the torch this knows: the handle alone
  }
  bool published = false;
  try {
    const std::lock_guard<std::mutex> lock(torch_publishing);
    if (!torch_resolved.load(std::memory_order_relaxed)) {
      torch_api = found;
      torch_resolved.store(true, std::memory_order_release);
      published = true;
    }
  } catch (...) {
    // The mutex could not be taken (a system error): asked again next time.
  }
  if (!published) drop(found); // another thread published first (or none could)
  return torch_resolved.load(std::memory_order_acquire) && torch_api.stream_type != nullptr;
}

void let_torch_see_its_object(PyObject* stream) noexcept {
  if (!resolve_torch()) return;
  const int is_torch_stream = PyObject_IsInstance(stream, torch_api.stream_type);
  if (is_torch_stream != 1) {
    if (is_torch_stream < 0) PyErr_Clear();
    return;
  }
  const python_error_guard keep;
  if (torch_api.set_stream_by_id == nullptr) {
    (void)sd::scoped_ref::steal(PyObject_CallOneArg(torch_api.set_stream, stream));
    return;
  }
  // The object's three ids, read by the names the setter takes them by.
  sd::scoped_ref values[3];
  PyObject* args[3];
  for (int i = 0; i < 3; ++i) {
    values[i] = sd::scoped_ref::steal(PyObject_GetAttr(stream, PyTuple_GET_ITEM(torch_api.id_names, i)));
    if (!values[i]) return;
    args[i] = values[i].get();
  }
  (void)sd::scoped_ref::steal(PyObject_Vectorcall(torch_api.set_stream_by_id, args, 0, torch_api.id_names));
}

/// `with streamlike.use(stream, device=None):` a scoped_current_stream entered and left from
/// Python, on one thread.
class use_scope {
public:
  use_scope(nb::object stream, std::optional<int> device)
      : object_(std::move(stream)), view_(read(object_)), device_(device) {
    if (device_ && *device_ < 0) {
      throw nb::value_error(
          ("use: device must be None (the stream's device) or an int >= 0, got " + std::to_string(*device_)).c_str());
    }
  }

  use_scope& enter() {
    if (scope_)
      throw std::runtime_error("streamlike.use: this block is already entered; make a new use(...) per with-statement");
    streamlike_package::register_cupy_if_loaded();
    sd::saved_error provider_error; // a provider's Python error, the cause of the scope's
    try {
      const use_entry entry(object_.ptr(), view_, provider_error);
      scope_ = device_ ? std::make_unique<streamlike::scoped_current_stream>(view_, *device_)
                       : std::make_unique<streamlike::scoped_current_stream>(view_);
    } catch (...) {
      sd::set_error_from_current_exception();
      raise_from(std::move(provider_error)); // raise ... from the provider's error
      throw nb::python_error();
    }
    thread_ = std::this_thread::get_id();
    let_torch_see_its_object(object_.ptr());
    return *this;
  }

  use_scope(const use_scope&) = delete;
  use_scope& operator=(const use_scope&) = delete;
  ~use_scope() { leak_if_entered(); }

  void exit() {
    if (!scope_) return;
    if (thread_ != std::this_thread::get_id()) {
      // Restoring here would change this thread's streams, not those of the thread that entered.
      leak_if_entered();
      throw std::runtime_error("streamlike.use: the block was left on another thread than the one that entered it; "
                               "that thread's current streams were not restored (its stream is kept alive for good)");
    }
    scope_.reset();
  }

  /// A block that can no longer be left where it was entered (left on another thread, or collected
  /// while entered): its stream may still be current in the entering thread's frameworks, so the
  /// scope is never restored and the stream object is never released (a leak, by design).
  void leak_if_entered() noexcept {
    if (!scope_) return;
    (void)scope_.release();
    if (object_.is_valid()) object_.inc_ref();
  }

  [[nodiscard]] const nb::object& stream() const noexcept { return object_; }
  /// For the garbage collector (use_traverse, use_clear): the stream object may refer back to us.
  [[nodiscard]] nb::object& held() noexcept { return object_; }

  /// The stream of `obj`, read as every stream argument of the package is (stream_argument; the
  /// casters' errors: TypeError naming the type). Not the casters' decode_view: the current-stream
  /// check must not flag the stream a use block is about to make current.
  static stream_view read(const nb::object& obj) { return streamlike_package::stream_argument(obj); }
  [[nodiscard]] std::optional<int> device() const noexcept {
    return scope_ ? std::optional<int>(scope_->device()) : device_;
  }

private:
  nb::object object_; // kept alive while current
  stream_view view_;
  std::optional<int> device_;
  std::unique_ptr<streamlike::scoped_current_stream> scope_;
  std::thread::id thread_;
};

// The stream object held by a use block may reach the block again (a cycle through a frame or a
// module global): the collector sees the reference and can break the cycle.
int use_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  Py_VISIT(nb::inst_ptr<use_scope>(self)->held().ptr());
  return 0;
}

int use_clear(PyObject* self) {
  if (nb::inst_ready(self)) {
    use_scope* block = nb::inst_ptr<use_scope>(self);
    block->leak_if_entered(); // an entered block's stream outlives the collected cycle
    block->held().reset();
  }
  return 0;
}

PyType_Slot use_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(&use_traverse)},
                           {Py_tp_clear, reinterpret_cast<void*>(&use_clear)},
                           {0, nullptr}};

} // namespace

namespace streamlike_package {

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
      streamlike_current_stream_provider table{};
      table.major_version = STREAMLIKE_CURRENT_STREAM_PROVIDER_MAJOR_VERSION;
      table.minor_version = STREAMLIKE_CURRENT_STREAM_PROVIDER_MINOR_VERSION;
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

void bind_current_stream(nb::module_& m) {
  static PyMethodDef current_stream_def = {
      "current_stream", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&py_current_stream)),
      METH_FASTCALL | METH_KEYWORDS,
      "current_stream(device=None) -> StreamView: the calling thread's current stream on `device` (default: the "
      "current device), as torch, tvm-ffi, CuPy and streamlike.use agree on it (docs/current-stream.md)."};
  PyObject* function = PyCFunction_NewEx(&current_stream_def, nullptr, m.attr("__name__").ptr());
  if (function == nullptr) throw nb::python_error();
  m.attr("current_stream") = nb::steal(function);

  nb::class_<use_scope>(m, "use", nb::type_slots(use_slots),
                        "with streamlike.use(stream, device=None): makes `stream` (any object with __cuda_stream__) "
                        "current for this thread on its device in streamlike, torch, tvm-ffi and CuPy, and restores "
                        "each on exit, also when an exception leaves the block.")
      .def(nb::init<nb::object, std::optional<int>>(), nb::arg("stream"), nb::arg("device") = nb::none())
      .def("__enter__", &use_scope::enter, nb::rv_policy::reference)
      .def(
          "__exit__", [](use_scope& self, nb::handle, nb::handle, nb::handle) { self.exit(); },
          nb::arg("exc_type").none(), nb::arg("exc_value").none(), nb::arg("traceback").none())
      .def_prop_ro("stream", &use_scope::stream, "The stream object given.")
      .def_prop_ro("device", &use_scope::device, "The device it is (or will be) current on; None: the stream's.");
  m.attr("use").attr("__module__") = "streamlike";

  m.def(
      "_register_cupy_if_loaded", []() { streamlike_package::register_cupy_if_loaded(); },
      "Registers CuPy's current-stream provider once `cupy` is imported (the package's import hook calls it).");
  m.def(
      "current_stream_providers",
      []() {
        streamlike_package::register_cupy_if_loaded();
        nb::list names;
        for (const auto& p : streamlike::current_stream_providers()) names.append(nb::str(p.name.c_str()));
        return names;
      },
      "The names of the current-stream providers, in the order current_stream() asks them.");
  m.def(
      "current_stream_conflicts",
      [](nb::handle device_arg) {
        int device = 0;
        if (!read_device_or_current("current_stream_conflicts", device_arg.ptr(), device)) throw nb::python_error();
        streamlike_package::register_cupy_if_loaded();
        nb::list out;
        for (const auto& answer : streamlike::current_stream_conflicts(device)) {
          PyObject* view = streamlike_package::new_view(answer.stream, nullptr, "current");
          if (view == nullptr) throw nb::python_error();
          out.append(nb::make_tuple(nb::str(answer.provider.c_str()), nb::steal(view)));
        }
        return out;
      },
      nb::arg("device").none() = nb::none(),
      "[(provider, StreamView)] when the providers' current streams on `device` disagree, the one current_stream() "
      "returns first; [] when they agree.");
  m.def(
      "set_current_stream_check", [](bool on) { streamlike::set_current_stream_check(on); }, nb::arg("on"),
      "Turns on (or off) the check that reports, once per call site, a stream argument that is not the current "
      "stream (also: STREAMLIKE_CHECK_CURRENT_STREAM=1).");
  m.def(
      "current_stream_check_enabled", []() { return streamlike::current_stream_check_enabled(); },
      "Whether the current-stream check is on.");

  // This copy's C table (streamlike/c/current_stream_provider.h): other modules and frameworks
  // read, set and register through it (CuPy's provider and the use blocks live in this copy).
  m.attr("_current_stream_api") =
      nb::capsule(const_cast<streamlike_current_stream_api*>(streamlike_current_stream_api_table()),
                  streamlike::python::package_current_stream_capsule);
}

} // namespace streamlike_package
