// _streamlike: the extension module of the `streamlike` Python package (docs/python-package.md).
//
// StreamView and Stream are plain CPython types (not nanobind classes): a Stream object starts with
// the casters' stream_object (streamlike/python/detail/stream_object.hpp), so every extension
// module built on the casters can make and read the package's Stream directly (the capsule
// `_C_API`, detail/package_api.hpp), and both construct through vectorcall, without an argument
// tuple. nanobind defines the module and the small classes (Event, StreamPool).
#include <nanobind/nanobind.h>

#include <streamlike/event.hpp>
#include <streamlike/ordering.hpp>
#include <streamlike/python/detail/package_api.hpp>
#include <streamlike/python/nanobind.hpp>
#include <streamlike/stream_encodings.hpp>
#include <streamlike/stream_pool.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <utility>

namespace nb = nanobind;
namespace sd = streamlike::python::detail;
using streamlike::shared_stream;
using streamlike::stream_view;

namespace {

// How a stream was read (the `source` attribute).
constexpr const char* source_streamlike = "streamlike"; // a streamlike Stream or StreamView
constexpr const char* source_torch = "torch";           // torch's fast path (no __cuda_stream__ call)
constexpr const char* source_protocol = "protocol";     // __cuda_stream__
constexpr const char* source_created = "created";       // Stream.create / StreamPool

constexpr const char* source_owned = "owned-capsule";   // __cuda_stream_owned__

/// A stream's facts, read together on first use (when the stream is not capturing) and kept.
/// All zero: not read yet.
struct stream_facts {
  bool known;
  int device;
  int priority;
  unsigned int flags;
  unsigned long long id;
};

/// streamlike.Stream. The casters of any module fill in `base` (tp_alloc zeroes the rest).
struct package_stream {
  sd::stream_object base;
  PyObject* exporter; // the object it was made from (strong); nullptr: None
  const char* source; // nullptr: made by C++ ("streamlike")
  stream_facts facts;
};

/// streamlike.StreamView: a handle, the object that exported it, and its facts read on first use.
struct view_object {
  PyObject_HEAD
  cudaStream_t handle;
  PyObject* exporter;  // strong; nullptr: None (made by a decoder)
  const char* source;
  shared_stream owner; // only for an object that offers nothing but __cuda_stream_owned__
  stream_facts facts;
};

PyTypeObject* stream_type = nullptr; // strong references, for the life of the process
PyTypeObject* view_type = nullptr;
PyObject* event_type = nullptr; // nanobind's Event class

/// The Python exception for the C++ exception in flight; the CUDA error state is cleared, so a
/// failed call leaves nothing behind for the next one.
void set_python_error() noexcept {
  sd::set_error_from_current_exception();
  (void)cudaGetLastError();
}

template <class F>
PyObject* guarded(F&& f) noexcept {
  try {
    return std::forward<F>(f)();
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

PyObject* py_bool(bool value) noexcept { return PyBool_FromLong(value ? 1 : 0); }

[[nodiscard]] bool is_stream(PyObject* obj) noexcept { return Py_TYPE(obj) == stream_type; }
[[nodiscard]] bool is_view(PyObject* obj) noexcept { return Py_TYPE(obj) == view_type; }
[[nodiscard]] package_stream* as_stream(PyObject* obj) noexcept { return reinterpret_cast<package_stream*>(obj); }
[[nodiscard]] view_object* as_view(PyObject* obj) noexcept { return reinterpret_cast<view_object*>(obj); }

/// Reads any stream object: ours without a Python call, torch's through its fast path, the rest
/// through __cuda_stream__. Sets `source`. On failure the Python exception is set (TypeError or
/// ValueError naming the object's type and what was expected, or what the object itself raised).
[[nodiscard]] bool read_stream(PyObject* obj, stream_view& out, const char*& source) noexcept {
  if (is_stream(obj)) {
    out = stream_view{as_stream(obj)->base.handle};
    source = source_streamlike;
    return true;
  }
  if (is_view(obj)) {
    out = stream_view{as_view(obj)->handle};
    source = source_streamlike;
    return true;
  }
  PyObject* name = sd::cuda_stream_name();
  if (name == nullptr) return false;
  if (const sd::exporter_reader reader = sd::reader_for(obj, name); reader.torch) {
    if (std::optional<sd::decode_status> status = sd::read_torch_handle(obj, reader, out)) {
      source = source_torch;
      return sd::report(obj, true, *status) == sd::outcome::ok;
    }
  }
  source = source_protocol;
  return sd::report(obj, true, sd::call_protocol(obj, name, out)) == sd::outcome::ok;
}

// --- StreamView --------------------------------------------------------------------------------

PyObject* new_view(cudaStream_t handle, PyObject* exporter, const char* source) noexcept {
  PyObject* self = view_type->tp_alloc(view_type, 0);
  if (self == nullptr) return nullptr;
  view_object* v = as_view(self);
  ::new (static_cast<void*>(&v->owner)) shared_stream();
  v->handle = handle;
  v->exporter = exporter;
  Py_XINCREF(exporter);
  v->source = source;
  return self;
}

/// Whether `obj`'s type has the special method `name` (looked up as Python looks them up).
[[nodiscard]] bool type_has(PyObject* obj, PyObject* name) noexcept {
  PyObject* method = _PyType_Lookup(Py_TYPE(obj), name); // borrowed
  return method != nullptr && method != Py_None;
}

PyObject* view_from(PyObject* obj) noexcept {
  // A view reads __cuda_stream__ and keeps the object alive; an object that offers only an owning
  // reference (__cuda_stream_owned__) gives that, and the view holds it.
  if (!is_stream(obj) && !is_view(obj)) {
    PyObject* protocol = sd::cuda_stream_name();
    PyObject* owned_name = sd::cuda_stream_owned_name();
    if (protocol == nullptr || owned_name == nullptr) return nullptr;
    if (!type_has(obj, protocol) && type_has(obj, owned_name)) {
      shared_stream owner;
      switch (sd::read_owned(obj, owner)) {
        case sd::owned_read::failed: return nullptr;
        case sd::owned_read::taken: {
          PyObject* self = new_view(owner.get(), obj, source_owned);
          if (self != nullptr) as_view(self)->owner = std::move(owner);
          return self;
        }
        case sd::owned_read::not_offered: break; // returned None: the protocol's TypeError follows
      }
    }
  }
  stream_view view = stream_view::legacy_default();
  const char* source = nullptr;
  if (!read_stream(obj, view, source)) return nullptr;
  return new_view(view.get(), obj, source);
}

/// The TypeError for a constructor not given exactly one positional argument.
void wrong_arguments(const char* what, Py_ssize_t nargs, Py_ssize_t nkw) noexcept {
  PyErr_Format(PyExc_TypeError,
               "%s() takes exactly one positional argument, the stream object (anything with __cuda_stream__); "
               "got %zd positional and %zd keyword arguments%s",
               what, nargs, nkw, std::strcmp(what, "Stream") == 0 ? "; Stream.create() makes a new stream" : "");
}

[[nodiscard]] bool one_argument(const char* what, Py_ssize_t nargs, PyObject* kwnames) noexcept {
  const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs == 1 && nkw == 0) return true;
  wrong_arguments(what, nargs, nkw);
  return false;
}

PyObject* view_vectorcall(PyObject*, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  if (!one_argument("StreamView", PyVectorcall_NARGS(nargsf), kwnames)) return nullptr;
  return view_from(args[0]);
}

PyObject* view_new(PyTypeObject*, PyObject* args, PyObject* kwargs) {
  const Py_ssize_t nkw = kwargs != nullptr ? PyDict_Size(kwargs) : 0;
  if (PyTuple_GET_SIZE(args) != 1 || nkw != 0) {
    wrong_arguments("StreamView", PyTuple_GET_SIZE(args), nkw);
    return nullptr;
  }
  return view_from(PyTuple_GET_ITEM(args, 0));
}

int view_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(as_view(self)->exporter);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int view_clear(PyObject* self) {
  Py_CLEAR(as_view(self)->exporter);
  return 0;
}

void view_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  (void)view_clear(self);
  as_view(self)->owner.~shared_stream();
  type->tp_free(self);
  Py_DECREF(type);
}

// --- The operations StreamView and Stream share ------------------------------------------------

[[nodiscard]] cudaStream_t handle_of(PyObject* self) noexcept {
  return is_stream(self) ? as_stream(self)->base.handle : as_view(self)->handle;
}
[[nodiscard]] PyObject* exporter_of(PyObject* self) noexcept {
  PyObject* e = is_stream(self) ? as_stream(self)->exporter : as_view(self)->exporter;
  return e != nullptr ? e : Py_None;
}
[[nodiscard]] bool view_is_default(cudaStream_t handle) noexcept { return stream_view{handle}.is_default(); }
[[nodiscard]] const char* source_of(PyObject* self) noexcept {
  const char* s = is_stream(self) ? as_stream(self)->source : as_view(self)->source;
  return s != nullptr ? s : source_streamlike;
}

enum class fact { device, id, priority, flags };

[[nodiscard]] stream_facts& facts_of(PyObject* self) noexcept {
  return is_stream(self) ? as_stream(self)->facts : as_view(self)->facts;
}

PyObject* fact_value(const stream_facts& f, fact which) noexcept {
  switch (which) {
    case fact::device: return PyLong_FromLong(f.device);
    case fact::id: return PyLong_FromUnsignedLongLong(f.id);
    case fact::priority: return PyLong_FromLong(f.priority);
    case fact::flags: return PyLong_FromUnsignedLong(f.flags);
  }
  return nullptr;
}

const char* fact_name(fact which) noexcept {
  switch (which) {
    case fact::device: return "device";
    case fact::id: return "id";
    case fact::priority: return "priority";
    case fact::flags: return "flags";
  }
  return "?";
}

PyObject* raise_cuda(const char* what, cudaError_t code) noexcept {
  (void)cudaGetLastError();
  PyErr_Format(PyExc_RuntimeError, "streamlike: %s failed: %s (%s)", what, cudaGetErrorName(code),
               cudaGetErrorString(code));
  return nullptr;
}

/// A fact, capture-safe: read together with the others and kept when the stream is not capturing
/// (default streams: read each time, they answer for the current device); while it captures,
/// device (through the stream's context) and priority are read, and id and flags, which only calls that
/// invalidate a capture can read, raise RuntimeError unless they were read before.
PyObject* get_fact(PyObject* self, fact which) noexcept {
  stream_facts& kept = facts_of(self);
  if (kept.known) return fact_value(kept, which);
  const cudaStream_t handle = handle_of(self);
  const char* type = is_stream(self) ? "Stream" : "StreamView";
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (const cudaError_t code = cudaStreamIsCapturing(handle, &status); code != cudaSuccess) {
    return raise_cuda("cudaStreamIsCapturing", code);
  }
  if (status == cudaStreamCaptureStatusNone) {
    stream_facts read{};
    try {
      const stream_view view{handle};
      read.device = view.device();
      read.id = view.id();
      read.flags = view.flags();
      read.priority = view.priority();
    } catch (...) {
      set_python_error();
      return nullptr;
    }
    read.known = !view_is_default(handle);
    kept = read;
    return fact_value(read, which);
  }
  // Capturing: the library reads device (through the stream's context) and priority without
  // invalidating the capture; id and flags have no such form.
  if (which == fact::device) return guarded([&] { return PyLong_FromLong(stream_view{handle}.device()); });
  if (which == fact::priority) return guarded([&] { return PyLong_FromLong(stream_view{handle}.priority()); });
  PyErr_Format(PyExc_RuntimeError,
               "streamlike: %s.%s: the stream is capturing a CUDA graph, and %s would invalidate the capture; "
               "read it before the capture begins (a %s keeps the facts it has read)",
               type, fact_name(which), which == fact::id ? "cudaStreamGetId" : "cudaStreamGetFlags", type);
  return nullptr;
}

PyObject* get_device(PyObject* self, void*) { return get_fact(self, fact::device); }
PyObject* get_id(PyObject* self, void*) { return get_fact(self, fact::id); }
PyObject* get_priority(PyObject* self, void*) { return get_fact(self, fact::priority); }
PyObject* get_flags(PyObject* self, void*) { return get_fact(self, fact::flags); }
PyObject* get_handle(PyObject* self, void*) { return sd::handle_to_int(handle_of(self)); }
PyObject* get_exporter(PyObject* self, void*) { return Py_NewRef(exporter_of(self)); }
PyObject* get_source(PyObject* self, void*) { return PyUnicode_FromString(source_of(self)); }
PyObject* get_is_default(PyObject* self, void*) { return py_bool(stream_view{handle_of(self)}.is_default()); }

// cudaStreamGetCaptureInfo is legal on a capturing stream (cudaStreamQuery is not).
PyObject* get_is_capturing(PyObject* self, void*) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t code = cudaStreamGetCaptureInfo(handle_of(self), &status);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    PyErr_Format(PyExc_RuntimeError, "streamlike: is_capturing: cudaStreamGetCaptureInfo failed: %s (%s)",
                 cudaGetErrorName(code), cudaGetErrorString(code));
    return nullptr;
  }
  return py_bool(status != cudaStreamCaptureStatusNone);
}

PyObject* method_sync(PyObject* self, PyObject*) {
  // Without the GIL: other Python threads run while this one waits for the GPU.
  const cudaStream_t handle = handle_of(self);
  PyThreadState* saved = PyEval_SaveThread();
  const cudaError_t code = cudaStreamSynchronize(handle);
  PyEval_RestoreThread(saved);
  if (code != cudaSuccess) return raise_cuda("sync: cudaStreamSynchronize", code);
  Py_RETURN_NONE;
}

PyObject* method_is_done(PyObject* self, PyObject*) {
  return guarded([&] { return py_bool(stream_view{handle_of(self)}.is_done()); });
}

PyObject* method_wait(PyObject* self, PyObject* other) {
  const stream_view consumer{handle_of(self)};
  if (event_type != nullptr && PyObject_TypeCheck(other, reinterpret_cast<PyTypeObject*>(event_type))) {
    return guarded([&]() -> PyObject* {
      consumer.wait(nb::cast<const streamlike::event&>(nb::handle(other)).get());
      Py_RETURN_NONE;
    });
  }
  stream_view producer = stream_view::legacy_default();
  const char* source = nullptr;
  if (!read_stream(other, producer, source)) return nullptr;
  return guarded([&]() -> PyObject* {
    consumer.wait(producer);
    Py_RETURN_NONE;
  });
}

PyObject* method_record(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"timing", nullptr};
  PyObject* timing = Py_False;
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "|$O:record", const_cast<char**>(keywords), &timing) == 0) {
    return nullptr;
  }
  if (!PyBool_Check(timing)) {
    PyErr_Format(PyExc_TypeError, "record(timing=...): expected a bool, got an object of type '%s'",
                 Py_TYPE(timing)->tp_name);
    return nullptr;
  }
  const stream_view view{handle_of(self)};
  return guarded([&] {
    streamlike::event e = streamlike::record(view, streamlike::event_options{.timing = timing == Py_True});
    return nb::cast(std::move(e)).release().ptr();
  });
}

PyObject* method_cuda_stream(PyObject* self, PyObject*) {
  PyObject* address = sd::handle_to_int(handle_of(self));
  if (address == nullptr) return nullptr;
  PyObject* result = PyTuple_New(2);
  if (result == nullptr) {
    Py_DECREF(address);
    return nullptr;
  }
  PyTuple_SET_ITEM(result, 0, PyLong_FromLong(0));
  PyTuple_SET_ITEM(result, 1, address);
  return result;
}

PyObject* any_repr(PyObject* self) {
  const char* type = is_stream(self) ? "Stream" : "StreamView";
  PyObject* exporter = exporter_of(self);
  const char* exporter_type = exporter == Py_None ? "None" : Py_TYPE(exporter)->tp_name;
  if (is_stream(self)) {
    return PyUnicode_FromFormat("<streamlike.%s handle=%p %s source=%s exporter=%s>", type,
                                static_cast<void*>(handle_of(self)),
                                as_stream(self)->base.owner ? "owning" : "non-owning", source_of(self), exporter_type);
  }
  return PyUnicode_FromFormat("<streamlike.%s handle=%p source=%s exporter=%s>", type,
                              static_cast<void*>(handle_of(self)), source_of(self), exporter_type);
}

Py_hash_t any_hash(PyObject* self) {
  const auto h = static_cast<Py_hash_t>(reinterpret_cast<std::uintptr_t>(handle_of(self)));
  return h == -1 ? -2 : h;
}

// Equal when they name the same handle (a Stream and a StreamView of one stream are equal).
PyObject* any_richcompare(PyObject* self, PyObject* other, int op) {
  if ((op != Py_EQ && op != Py_NE) || !(is_stream(other) || is_view(other))) Py_RETURN_NOTIMPLEMENTED;
  const bool same = handle_of(self) == handle_of(other);
  return py_bool(same == (op == Py_EQ));
}

// --- Stream ------------------------------------------------------------------------------------

/// A new Stream holding `owner`, naming `handle`; exporter and source as given.
PyObject* new_stream(shared_stream owner, cudaStream_t handle, PyObject* exporter, const char* source) noexcept {
  PyObject* self = stream_type->tp_alloc(stream_type, 0);
  if (self == nullptr) return nullptr;
  package_stream* s = as_stream(self);
  ::new (static_cast<void*>(&s->base.owner)) shared_stream(std::move(owner));
  s->base.handle = handle;
  s->exporter = exporter;
  Py_XINCREF(exporter);
  s->source = source;
  return self;
}

/// Stream(obj): shares a Stream's owner; any other stream object is kept alive while the stream is
/// used, from Python or from C++.
PyObject* stream_from(PyObject* obj) noexcept {
  if (is_stream(obj) && as_stream(obj)->base.owner) {
    return new_stream(as_stream(obj)->base.owner, as_stream(obj)->base.handle, obj, source_streamlike);
  }
  if (!is_stream(obj) && !is_view(obj)) { // an owning reference where the object offers one
    shared_stream owned;
    switch (sd::read_owned(obj, owned)) {
      case sd::owned_read::failed: return nullptr;
      case sd::owned_read::taken: {
        const cudaStream_t handle = owned.get();
        return new_stream(std::move(owned), handle, obj, source_owned);
      }
      case sd::owned_read::not_offered: break;
    }
  }
  stream_view view = stream_view::legacy_default();
  const char* source = nullptr;
  if (!read_stream(obj, view, source)) return nullptr;
  shared_stream owner = sd::reference_block::make(view, obj);
  if (!owner) return nullptr; // MemoryError
  return new_stream(std::move(owner), view.get(), obj, source);
}

PyObject* stream_vectorcall(PyObject*, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  if (!one_argument("Stream", PyVectorcall_NARGS(nargsf), kwnames)) return nullptr;
  return stream_from(args[0]);
}

PyObject* stream_new(PyTypeObject*, PyObject* args, PyObject* kwargs) {
  const Py_ssize_t nkw = kwargs != nullptr ? PyDict_Size(kwargs) : 0;
  if (PyTuple_GET_SIZE(args) != 1 || nkw != 0) {
    wrong_arguments("Stream", PyTuple_GET_SIZE(args), nkw);
    return nullptr;
  }
  return stream_from(PyTuple_GET_ITEM(args, 0));
}

/// `value` as an optional device ordinal; false with TypeError if it is neither None nor an int.
[[nodiscard]] bool read_device(const char* where, PyObject* value, std::optional<int>& device) noexcept {
  if (value == Py_None) return true;
  if (!PyLong_Check(value) || PyBool_Check(value)) {
    PyErr_Format(PyExc_TypeError, "%s: device must be None (the current device) or an int (a device ordinal), "
                 "got an object of type '%s'", where, Py_TYPE(value)->tp_name);
    return false;
  }
  int overflow = 0;
  const long ordinal = PyLong_AsLongAndOverflow(value, &overflow);
  if (overflow != 0 || ordinal < 0 || ordinal > 1 << 20) {
    if (!PyErr_Occurred()) {
      PyErr_Format(PyExc_ValueError, "%s: device must be a device ordinal >= 0, got %R", where, value);
    }
    return false;
  }
  device = static_cast<int>(ordinal);
  return true;
}

/// What Stream.create's stream is held by: destroyed with the last owner, Python or C++.
struct created_stream {
  cudaStream_t handle;
  explicit created_stream(cudaStream_t h) noexcept : handle(h) {}
  created_stream(created_stream&& other) noexcept : handle(std::exchange(other.handle, nullptr)) {}
  created_stream(const created_stream&) = delete;
  created_stream& operator=(const created_stream&) = delete;
  created_stream& operator=(created_stream&&) = delete;
  ~created_stream() {
    // Any device may be current: a stream names its own context. At process exit the runtime may
    // be unloading already, and the stream went with it.
    if (handle != nullptr && cudaStreamDestroy(handle) != cudaSuccess) (void)cudaGetLastError();
  }
};

/// Per device, the priority range, read once (the GIL guards it).
struct priority_range {
  bool known = false;
  int least = 0;
  int greatest = 0;
};

/// A new stream as shared_stream::create makes it, with its errors, but with no more CUDA calls
/// than creating it needs (the device count and priority ranges are read once, the facts on first
/// use): Stream.create() + drop costs what cudaStreamCreateWithPriority + cudaStreamDestroy do.
shared_stream create_owned(const streamlike::stream_options& options) {
  static int device_count = -1;
  static std::array<priority_range, 64> ranges{};
  if (device_count < 0) {
    int count = 0;
    streamlike::detail::throw_if_error(cudaGetDeviceCount(&count), "Stream.create: cudaGetDeviceCount");
    device_count = count;
  }
  int current = 0;
  streamlike::detail::throw_if_error(cudaGetDevice(&current), "Stream.create: cudaGetDevice");
  const int device = options.device.value_or(current);
  if (device < 0 || device >= device_count) {
    throw std::invalid_argument("streamlike: Stream.create: device " + std::to_string(device) +
                                " does not exist; expected 0.." + std::to_string(device_count - 1) + " (" +
                                std::to_string(device_count) + " device(s))");
  }
  const bool switch_device = device != current;
  if (switch_device) streamlike::detail::throw_if_error(cudaSetDevice(device), "Stream.create: cudaSetDevice");
  struct restore {
    bool active;
    int device;
    ~restore() {
      if (active && cudaSetDevice(device) != cudaSuccess) (void)cudaGetLastError();
    }
  } restore_device{switch_device, current};
  priority_range none;
  priority_range& range = static_cast<std::size_t>(device) < ranges.size() ? ranges[device] : none;
  if (!range.known) {
    streamlike::detail::throw_if_error(cudaDeviceGetStreamPriorityRange(&range.least, &range.greatest),
                               "Stream.create: cudaDeviceGetStreamPriorityRange");
    range.known = true;
  }
  if (options.priority < range.greatest || options.priority > range.least) {
    throw std::invalid_argument("streamlike: Stream.create: priority " + std::to_string(options.priority) +
                                " is outside device " + std::to_string(device) + "'s range; expected " +
                                std::to_string(range.greatest) + " (highest) to " + std::to_string(range.least) +
                                " (lowest)");
  }
  cudaStream_t handle = nullptr;
  streamlike::detail::throw_if_error(cudaStreamCreateWithPriority(
                                 &handle, options.non_blocking ? cudaStreamNonBlocking : cudaStreamDefault,
                                 options.priority),
                             "Stream.create: cudaStreamCreateWithPriority");
  created_stream held(handle);
  return shared_stream::keep_alive(stream_view{handle}, std::move(held)); // destroys it if this throws
}

PyObject* stream_create(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"device", "priority", "non_blocking", nullptr};
  PyObject* device_arg = Py_None;
  PyObject* priority_arg = nullptr;
  PyObject* non_blocking_arg = Py_True;
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "|OOO:create", const_cast<char**>(keywords), &device_arg,
                                  &priority_arg, &non_blocking_arg) == 0) {
    return nullptr;
  }
  streamlike::stream_options options;
  if (!read_device("Stream.create", device_arg, options.device)) return nullptr;
  if (priority_arg != nullptr) {
    if (!PyLong_Check(priority_arg) || PyBool_Check(priority_arg)) {
      PyErr_Format(PyExc_TypeError,
                   "Stream.create: priority must be an int (0 is the default; lower numbers are higher "
                   "priorities), got an object of type '%s'",
                   Py_TYPE(priority_arg)->tp_name);
      return nullptr;
    }
    int overflow = 0;
    const long priority = PyLong_AsLongAndOverflow(priority_arg, &overflow);
    if (overflow != 0 || priority < -(1 << 20) || priority > (1 << 20)) {
      PyErr_Format(PyExc_ValueError, "Stream.create: priority %R is out of range; expected a small int, "
                   "within the device's range (cudaDeviceGetStreamPriorityRange)", priority_arg);
      return nullptr;
    }
    options.priority = static_cast<int>(priority);
  }
  if (!PyBool_Check(non_blocking_arg)) {
    PyErr_Format(PyExc_TypeError, "Stream.create: non_blocking must be a bool, got an object of type '%s'",
                 Py_TYPE(non_blocking_arg)->tp_name);
    return nullptr;
  }
  options.non_blocking = non_blocking_arg == Py_True;
  shared_stream owner;
  try {
    owner = create_owned(options);
  } catch (...) {
    set_python_error();
    return nullptr;
  }
  const cudaStream_t handle = owner.get();
  return new_stream(std::move(owner), handle, nullptr, source_created);
}

int stream_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(as_stream(self)->exporter);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int stream_clear(PyObject* self) {
  Py_CLEAR(as_stream(self)->exporter);
  return 0;
}

void stream_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  (void)stream_clear(self);
  // May release a Python exporter (the GIL is held) or destroy the CUDA stream (never throws).
  as_stream(self)->base.owner.~shared_stream();
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* method_cuda_stream_owned(PyObject* self, PyObject*) { return sd::owned_capsule(as_stream(self)->base.owner); }

PyObject* get_owning(PyObject* self, void*) { return py_bool(static_cast<bool>(as_stream(self)->base.owner)); }
PyObject* get_use_count(PyObject* self, void*) { return PyLong_FromLong(as_stream(self)->base.owner.use_count()); }

// --- The types ---------------------------------------------------------------------------------

#define STREAMLIKE_FACT_GETTERS                                                                                         \
  {"handle", &get_handle, nullptr, "The cudaStream_t address, as an int.", nullptr},                                  \
      {"exporter", &get_exporter, nullptr, "The object this was made from (kept alive); None if made here.", nullptr}, \
      {"source", &get_source, nullptr,                                                                                  \
       "How the stream was read: 'streamlike', 'torch', 'protocol' (__cuda_stream__), 'created', or a decoder's name.", \
       nullptr},                                                                                                        \
      {"device", &get_device, nullptr, "The device the stream belongs to (cudaStreamGetDevice).", nullptr},          \
      {"id", &get_id, nullptr, "The process-unique stream id (cudaStreamGetId).", nullptr},                           \
      {"priority", &get_priority, nullptr, "The stream's priority (lower numbers are higher priorities).", nullptr}, \
      {"flags", &get_flags, nullptr, "cudaStreamDefault (0) or cudaStreamNonBlocking (1).", nullptr},                \
      {"is_default", &get_is_default, nullptr, "True for the handles 0, cudaStreamLegacy and cudaStreamPerThread.",   \
       nullptr},                                                                                                        \
  {                                                                                                                     \
    "is_capturing", &get_is_capturing, nullptr, "True while the stream is capturing a CUDA graph.", nullptr           \
  }

#define STREAMLIKE_STREAM_METHODS                                                                                      \
  {"__cuda_stream__", &method_cuda_stream, METH_NOARGS, "The CUDA Stream Protocol: (0, the cudaStream_t address)."},   \
      {"sync", &method_sync, METH_NOARGS, "Blocks until all work queued so far has completed."},                       \
      {"is_done", &method_is_done, METH_NOARGS, "True once all work queued so far has completed."},                    \
      {"wait", &method_wait, METH_O, "Work queued from now on waits for `other`: a stream object or an Event."},       \
  {                                                                                                                    \
    "record", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&method_record)),                            \
        METH_VARARGS | METH_KEYWORDS, "A new Event holding the work queued so far (timing=True for elapsed_ms)."        \
  }

PyTypeObject* make_view_type() {
  static PyMethodDef methods[] = {STREAMLIKE_STREAM_METHODS, {nullptr, nullptr, 0, nullptr}};
  static PyGetSetDef getset[] = {STREAMLIKE_FACT_GETTERS, {nullptr, nullptr, nullptr, nullptr, nullptr}};
  static PyType_Slot slots[] = {
      {Py_tp_new, reinterpret_cast<void*>(&view_new)},
      {Py_tp_dealloc, reinterpret_cast<void*>(&view_dealloc)},
      {Py_tp_traverse, reinterpret_cast<void*>(&view_traverse)},
      {Py_tp_clear, reinterpret_cast<void*>(&view_clear)},
      {Py_tp_repr, reinterpret_cast<void*>(&any_repr)},
      {Py_tp_hash, reinterpret_cast<void*>(&any_hash)},
      {Py_tp_richcompare, reinterpret_cast<void*>(&any_richcompare)},
      {Py_tp_methods, methods},
      {Py_tp_getset, getset},
      {Py_tp_doc, const_cast<char*>("StreamView(obj): a non-owning view of any stream object's CUDA stream, keeping "
                                    "the object alive.")},
      {0, nullptr}};
  static PyType_Spec spec = {"streamlike.StreamView", static_cast<int>(sizeof(view_object)), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, slots};
  auto* type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
  if (type != nullptr) type->tp_vectorcall = &view_vectorcall;
  return type;
}

PyTypeObject* make_package_stream_type() {
  static PyMethodDef methods[] = {
      STREAMLIKE_STREAM_METHODS,
      {"__cuda_stream_owned__", &method_cuda_stream_owned, METH_NOARGS,
       "An owning reference in a PyCapsule named 'cuda_stream_owned' (docs/owned-stream-abi.md); None for a "
       "non-owning Stream."},
      {"create", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&stream_create)),
       METH_VARARGS | METH_KEYWORDS | METH_CLASS,
       "create(device=None, priority=0, non_blocking=True) -> Stream: a new owning stream."},
      {nullptr, nullptr, 0, nullptr}};
  static PyGetSetDef getset[] = {
      STREAMLIKE_FACT_GETTERS,
      {"owning", &get_owning, nullptr, "True if this object keeps the stream alive.", nullptr},
      {"use_count", &get_use_count, nullptr, "How many owners (Python and C++) share the stream.", nullptr},
      {nullptr, nullptr, nullptr, nullptr, nullptr}};
  static PyType_Slot slots[] = {
      {Py_tp_new, reinterpret_cast<void*>(&stream_new)},
      {Py_tp_dealloc, reinterpret_cast<void*>(&stream_dealloc)},
      {Py_tp_traverse, reinterpret_cast<void*>(&stream_traverse)},
      {Py_tp_clear, reinterpret_cast<void*>(&stream_clear)},
      {Py_tp_repr, reinterpret_cast<void*>(&any_repr)},
      {Py_tp_hash, reinterpret_cast<void*>(&any_hash)},
      {Py_tp_richcompare, reinterpret_cast<void*>(&any_richcompare)},
      {Py_tp_methods, methods},
      {Py_tp_getset, getset},
      {Py_tp_doc, const_cast<char*>("A CUDA stream shared between Python and C++: Stream.create() or Stream(obj).")},
      {0, nullptr}};
  static PyType_Spec spec = {"streamlike.Stream", static_cast<int>(sizeof(package_stream)), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, slots};
  auto* type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
  if (type != nullptr) type->tp_vectorcall = &stream_vectorcall;
  return type;
}

// --- Module functions --------------------------------------------------------------------------

/// wait(consumer, producer): work queued on consumer from now on waits for producer's work so far.
PyObject* module_wait(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError, "wait() takes exactly 2 arguments (consumer, producer: stream objects), got %zd",
                 nargs);
    return nullptr;
  }
  stream_view consumer = stream_view::legacy_default();
  stream_view producer = stream_view::legacy_default();
  const char* source = nullptr;
  if (!read_stream(args[0], consumer, source) || !read_stream(args[1], producer, source)) return nullptr;
  return guarded([&]() -> PyObject* {
    consumer.wait(producer);
    Py_RETURN_NONE;
  });
}

/// from_address(address): a raw cudaStream_t address with the CUDA runtime's conventions.
PyObject* module_from_address(PyObject*, PyObject* value) {
  if (!PyLong_Check(value) || PyBool_Check(value)) {
    PyErr_Format(PyExc_TypeError, "from_address: expected an int (a cudaStream_t address), got an object of type '%s'",
                 Py_TYPE(value)->tp_name);
    return nullptr;
  }
  int overflow = 0;
  const long long sign = PyLong_AsLongLongAndOverflow(value, &overflow);
  if (overflow < 0 || (overflow == 0 && sign < 0)) {
    PyErr_Format(PyExc_ValueError,
                 "from_address: invalid stream address %R; expected an address >= 0 (0: the legacy default stream, "
                 "1: cudaStreamLegacy, 2: cudaStreamPerThread)",
                 value);
    return nullptr;
  }
  const unsigned long long address = PyLong_AsUnsignedLongLong(value);
  if (PyErr_Occurred() != nullptr) {
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "from_address: invalid stream address %R; expected a 64-bit address", value);
    return nullptr;
  }
  return guarded([&] { return new_view(streamlike::from_address(address).get(), nullptr, "address"); });
}

/// The baseline of the Stream.create benchmark (bench/python): a raw cudaStreamCreateWithPriority
/// and cudaStreamDestroy, as Stream.create() + drop make them, called from this module.
PyObject* module_raw_create_destroy(PyObject*, PyObject*) {
  cudaStream_t handle = nullptr;
  cudaError_t code = cudaStreamCreateWithPriority(&handle, cudaStreamNonBlocking, 0);
  if (code == cudaSuccess) code = cudaStreamDestroy(handle);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    PyErr_Format(PyExc_RuntimeError, "streamlike: _raw_create_destroy: %s (%s)", cudaGetErrorName(code),
                 cudaGetErrorString(code));
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* optional_view(const std::optional<stream_view>& view, const char* source) {
  if (!view) Py_RETURN_NONE;
  return new_view(view->get(), nullptr, source);
}

} // namespace

NB_MODULE(_streamlike, m) {
  stream_type = make_package_stream_type();
  if (stream_type == nullptr) throw nb::python_error();
  view_type = make_view_type();
  if (view_type == nullptr) throw nb::python_error();
  // This module's casters return the package's type; other modules find it through the capsule.
  Py_INCREF(stream_type);
  sd::stream_type_slot().store(stream_type, std::memory_order_release);
  m.attr("Stream") = nb::borrow(reinterpret_cast<PyObject*>(stream_type));
  m.attr("StreamView") = nb::borrow(reinterpret_cast<PyObject*>(view_type));
  static const sd::package_api api{sd::stream_object_layout_version, sizeof(sd::stream_object), stream_type};
  m.attr("_C_API") = nb::capsule(&api, sd::package_api_capsule);

  nb::class_<streamlike::event> event(m, "Event", "A recorded CUDA event (made by Stream.record()).");
  event_type = event.ptr();
  event.def_prop_ro("handle",
                    [](const streamlike::event& e) { return reinterpret_cast<std::uintptr_t>(e.get()); },
                    "The cudaEvent_t address, as an int.")
      .def(
          "sync",
          [](const streamlike::event& e) {
            const nb::gil_scoped_release unlocked;
            e.sync();
          },
          "Blocks until the recorded work has completed.")
      .def("is_done", &streamlike::event::is_done, "True once the recorded work has completed.")
      .def(
          "elapsed_ms",
          [](const streamlike::event& start, const streamlike::event& end) {
            return streamlike::elapsed_ms(start, end);
          },
          nb::arg("end"),
          "Milliseconds from this event to `end`; both recorded with record(timing=True) and completed.")
      .def("__repr__", [](const streamlike::event& e) {
        return "<streamlike.Event handle=" + std::to_string(reinterpret_cast<std::uintptr_t>(e.get())) + ">";
      });

  nb::class_<streamlike::stream_pool>(m, "StreamPool", "A fixed set of owning streams on one device, round-robin.")
      .def(
          "__init__",
          [](streamlike::stream_pool* self, nb::handle size, nb::handle device_arg) {
            if (!PyLong_Check(size.ptr()) || PyBool_Check(size.ptr())) {
              throw nb::type_error(("StreamPool: size must be an int (how many streams, >= 1), got an object of type '" +
                                    std::string(Py_TYPE(size.ptr())->tp_name) + "'")
                                       .c_str());
            }
            const long long n = PyLong_AsLongLong(size.ptr());
            if (n < 1 || n > 1 << 16) {
              PyErr_Clear();
              throw nb::value_error(
                  ("StreamPool: size must be between 1 and 65536, got " + std::string(nb::str(size).c_str())).c_str());
            }
            streamlike::stream_options options;
            if (!read_device("StreamPool", device_arg.ptr(), options.device)) throw nb::python_error();
            try {
              new (self) streamlike::stream_pool(static_cast<std::size_t>(n), options);
            } catch (...) {
              (void)cudaGetLastError();
              throw;
            }
          },
          nb::arg("size") = 16, nb::arg("device").none() = nb::none())
      .def("get", &streamlike::stream_pool::get, "The next stream, round-robin (an owning Stream).")
      .def("__len__", &streamlike::stream_pool::size)
      .def_prop_ro("size", &streamlike::stream_pool::size)
      .def_prop_ro("device", &streamlike::stream_pool::device);
  // Shown as streamlike.Event and streamlike.StreamPool, where users import them from.
  m.attr("Event").attr("__module__") = "streamlike";
  m.attr("StreamPool").attr("__module__") = "streamlike";

  static PyMethodDef functions[] = {
      {"wait", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&module_wait)), METH_FASTCALL,
       "wait(consumer, producer): work queued on consumer from now on waits for the work queued on producer."},
      {"from_address", &module_from_address, METH_O,
       "from_address(address: int) -> StreamView: a raw cudaStream_t address (0: the legacy default stream)."},
      {"_raw_create_destroy", &module_raw_create_destroy, METH_NOARGS,
       "Benchmark baseline: cudaStreamCreateWithPriority + cudaStreamDestroy, nothing else."},
      {nullptr, nullptr, 0, nullptr}};
  if (PyModule_AddFunctions(m.ptr(), functions) != 0) throw nb::python_error();

  m.def(
      "from_dlpack_stream",
      [](streamlike::python::dlpack_stream s) {
        return nb::steal(optional_view(s.view, "dlpack"));
      },
      nb::arg("stream").none(),
      "The stream a DLPack __dlpack__(stream=...) integer names; None for -1 (no synchronization).");
  m.def(
      "from_cai_stream",
      [](streamlike::python::cai_stream s) { return nb::steal(optional_view(s.view, "cuda_array_interface")); },
      nb::arg("stream").none(),
      "The stream a __cuda_array_interface__ 'stream' field names; None for None (no synchronization).");
}
