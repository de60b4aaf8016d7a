// streamlike.Stream: a shared_stream in Python. The same type every extension module built on the
// casters returns (the `_C_API` capsule, streamlike/c/package_api.h): objects start with the
// casters' stream_object, and modules fill in only that prefix.
#include "package.hpp"

#include <streamlike/c/current_stream_provider.h>
#include <streamlike/python/detail/package_api.hpp>
#include <streamlike/stream_options.hpp>

#include <structmember.h>

#include <cstddef>
#include <new>
#include <stdexcept>
#include <utility>

namespace streamlike_package {

PyObject* new_stream(shared_stream owner, cudaStream_t handle, PyObject* exporter, const char* source) noexcept {
  PyObject* self = stream_type->tp_alloc(stream_type, 0);
  if (self == nullptr) return nullptr;
  package_stream* s = as_stream(self);
  ::new (static_cast<void*>(&s->base.owner)) shared_stream(std::move(owner));
  s->base.handle = handle;
  s->block_object = share_block_object(s->base.owner);
  s->exporter = exporter;
  Py_XINCREF(exporter);
  s->source = source;
  return self;
}

bool read_device(const char* where, PyObject* value, std::optional<int>& device) noexcept {
  if (value == Py_None) return true;
  if (!PyLong_Check(value) || PyBool_Check(value)) {
    PyErr_Format(PyExc_TypeError,
                 "%s: device must be None (the current device) or an int (a device ordinal), got an object of "
                 "type '%s'",
                 where, Py_TYPE(value)->tp_name);
    return false;
  }
  int overflow = 0;
  const long ordinal = PyLong_AsLongAndOverflow(value, &overflow);
  if (overflow != 0 || ordinal < 0 || ordinal > 1 << 20) {
    if (PyErr_Occurred() == nullptr) {
      PyErr_Format(PyExc_ValueError, "%s: device must be None (the current device) or a device ordinal >= 0, got %R",
                   where, value);
    }
    return false;
  }
  device = static_cast<int>(ordinal);
  return true;
}

namespace {

/// Stream(obj): the casters' owning read (read_owning_stream): shares a Stream's owner; takes an
/// owning reference where the object offers one; any other stream object is held (by the
/// shared_stream's block, so also from C++) while the stream is used.
PyObject* stream_from(PyObject* obj) noexcept {
  shared_stream owner;
  const sd::owning_read read = sd::read_owning_stream(obj, owner);
  if (sd::report(obj, true, read.status) != sd::outcome::ok) return nullptr;
  const char* source = read.how == sd::owner_route::owned_capsule ? source_owned : source_of(read.route);
  const cudaStream_t handle = owner.get(); // cannot throw: read, so not empty
  return new_stream(std::move(owner), handle, obj, source);
}

PyObject* stream_vectorcall(PyObject*, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs != 1 || nkw != 0) {
    wrong_stream_arguments(nargs, nkw);
    return nullptr;
  }
  return stream_from(args[0]);
}

PyObject* stream_new(PyTypeObject*, PyObject* args, PyObject* kwargs) {
  const Py_ssize_t nkw = kwargs != nullptr ? PyDict_Size(kwargs) : 0;
  if (PyTuple_GET_SIZE(args) != 1 || nkw != 0) {
    wrong_stream_arguments(PyTuple_GET_SIZE(args), nkw);
    return nullptr;
  }
  return stream_from(PyTuple_GET_ITEM(args, 0));
}

// The arguments of Stream.create, read by the parser; only a call with arguments builds the tuple
// and the dict it takes.
bool parse_create_arguments(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject*& device_arg,
                            PyObject*& priority_arg, PyObject*& non_blocking_arg, PyObject*& partition_arg) noexcept {
  static const char* keywords[] = {"device", "priority", "non_blocking", "partition", nullptr};
  nb::object positional = nb::steal(PyTuple_New(nargs));
  nb::object named = nb::steal(PyDict_New());
  if (!positional.is_valid() || !named.is_valid()) return false;
  for (Py_ssize_t i = 0; i < nargs; ++i) PyTuple_SET_ITEM(positional.ptr(), i, Py_NewRef(args[i]));
  const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    if (PyDict_SetItem(named.ptr(), PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) != 0) return false;
  }
  // The parsed objects are borrowed from the call's arguments, which outlive this call's use of them.
  return PyArg_ParseTupleAndKeywords(positional.ptr(), named.ptr(), "|OOOO:create", const_cast<char**>(keywords),
                                     &device_arg, &priority_arg, &non_blocking_arg, &partition_arg) != 0;
}

/// Stream.create(device=None, priority=0, non_blocking=True): shared_stream::create. A static
/// method (vectorcall): reached through the type, it is called without binding a method object.
PyObject* stream_create(PyObject*, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  PyObject* device_arg = Py_None;
  PyObject* priority_arg = nullptr;
  PyObject* non_blocking_arg = Py_True;
  PyObject* partition_arg = Py_None;
  // Stream.create() with no arguments (the benchmarked call) skips the argument parser.
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if ((nargs != 0 || (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0)) &&
      !parse_create_arguments(args, nargs, kwnames, device_arg, priority_arg, non_blocking_arg, partition_arg)) {
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
      PyErr_Format(PyExc_ValueError,
                   "Stream.create: priority %R is out of range; expected a small int, within the device's range "
                   "(cudaDeviceGetStreamPriorityRange)",
                   priority_arg);
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
  if (!read_partition(partition_arg, options.partition)) return nullptr;
  shared_stream owner;
  try {
    owner = shared_stream::create(options);
  } catch (...) {
    sd::set_error_from_current_exception();
    return nullptr;
  }
  const cudaStream_t handle = owner.get();
  return new_stream(std::move(owner), handle, nullptr, source_created);
}

// The garbage collector sees every Python reference a Stream holds: its exporter, and, when its
// owner's block holds a Python object (Stream(obj), or a Stream sharing such a Stream's owner), its
// own reference to that object and, from one of the Python objects sharing the block while no C++
// owner does, the block's (visit_block_share). So an exporter that holds streamlike.Stream(self),
// or Stream(Stream(self)), is collected.
int stream_traverse(PyObject* self, visitproc visit, void* arg) {
  package_stream* s = as_stream(self);
  Py_VISIT(s->exporter);
  if (const int failed = visit_block_share(self, s->base.owner, s->block_object, visit, arg)) return failed;
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int stream_clear(PyObject* self) {
  package_stream* s = as_stream(self);
  PyObject* exporter = std::exchange(s->exporter, nullptr);
  clear_block_share(self, s->base.owner, s->block_object);
  Py_XDECREF(exporter); // last: it may run Python code
  return 0;
}

void stream_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  package_stream* s = as_stream(self);
  if (s->weakrefs != nullptr) PyObject_ClearWeakRefs(self);
  (void)stream_clear(self);
  s->facts.reset();
  // May release a Python exporter (the GIL is held) or destroy the CUDA stream (never throws).
  s->base.owner.~shared_stream();
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* method_cuda_stream_owned(PyObject* self, PyObject*) { return sd::owned_capsule(as_stream(self)->base.owner); }

PyObject* get_owning(PyObject* self, void*) { return PyBool_FromLong(as_stream(self)->base.owner ? 1 : 0); }
PyObject* get_use_count(PyObject* self, void*) { return PyLong_FromLong(as_stream(self)->base.owner.use_count()); }

} // namespace

void bind_stream(nb::module_& m) {
  static PyMethodDef own_methods[] = {
      {"__cuda_stream_owned__", &method_cuda_stream_owned, METH_NOARGS,
       "An owning reference in a PyCapsule named 'cuda_stream_owned' (docs/owned-stream-abi.md); None for a "
       "non-owning Stream."},
      {"create", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&stream_create)),
       METH_FASTCALL | METH_KEYWORDS | METH_STATIC,
       "create(device=None, priority=0, non_blocking=True, partition=None) -> Stream: a new owning stream (on "
       "`partition`'s SMs if given)."},
  };
  static PyGetSetDef own_getset[] = {
      {"owning", &get_owning, nullptr, "True if this object keeps the stream alive.", nullptr},
      {"use_count", &get_use_count, nullptr, "How many owners (Python and C++) share the stream.", nullptr},
  };
  // The shared entries, then Stream's own, then the terminator.
  static PyMethodDef methods[std::size(own_methods) + 16] = {};
  static PyGetSetDef getset[std::size(own_getset) + 16] = {};
  std::size_t n = 0;
  for (const PyMethodDef* d = common_methods; d->ml_name != nullptr; ++d) methods[n++] = *d;
  for (const PyMethodDef& d : own_methods) methods[n++] = d;
  n = 0;
  for (const PyGetSetDef* d = common_getset; d->name != nullptr; ++d) getset[n++] = *d;
  for (const PyGetSetDef& d : own_getset) getset[n++] = d;

  static PyMemberDef members[] = {{"__weaklistoffset__", T_PYSSIZET,
                                   static_cast<Py_ssize_t>(offsetof(package_stream, weakrefs)), READONLY, nullptr},
                                  {nullptr, 0, 0, 0, nullptr}};
  static PyType_Slot slots[] = {
      {Py_tp_new, reinterpret_cast<void*>(&stream_new)},
      {Py_tp_dealloc, reinterpret_cast<void*>(&stream_dealloc)},
      {Py_tp_traverse, reinterpret_cast<void*>(&stream_traverse)},
      {Py_tp_clear, reinterpret_cast<void*>(&stream_clear)},
      {Py_tp_repr, reinterpret_cast<void*>(&common_repr)},
      {Py_tp_hash, reinterpret_cast<void*>(&common_hash)},
      {Py_tp_richcompare, reinterpret_cast<void*>(&common_richcompare)},
      {Py_tp_methods, methods},
      {Py_tp_getset, getset},
      {Py_tp_members, members},
      {Py_tp_doc, const_cast<char*>("A CUDA stream shared between Python and C++: Stream.create() or Stream(obj).")},
      {0, nullptr}};
  static PyType_Spec spec = {"streamlike.Stream", static_cast<int>(sizeof(package_stream)), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, slots};
  stream_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
  if (stream_type == nullptr) throw nb::python_error();
  stream_type->tp_vectorcall = &stream_vectorcall;
  // This module's casters return the package's type; other modules find it through the capsule.
  Py_INCREF(stream_type);
  sd::stream_type_slot().store(stream_type, std::memory_order_release);
  m.attr("Stream") = nb::borrow(reinterpret_cast<PyObject*>(stream_type));
  // The package's C API (streamlike/c/package_api.h): its types, where a StreamView keeps its
  // handle, and its copy's current-stream table, under one layout version. Kept here too, so that
  // the package's own reader (the casters') recognises its StreamView.
  static_assert(sizeof(stream_view) == sizeof(cudaStream_t));
  static const sd::package_api api{STREAMLIKE_PACKAGE_API_VERSION,
                                   sizeof(sd::stream_object),
                                   stream_type,
                                   view_type,
                                   static_cast<Py_ssize_t>(offsetof(view_object, view)),
                                   streamlike_current_stream_api_table()};
  if (sd::keep_package_api(&api) == nullptr) throw std::logic_error("streamlike: the package's C API is malformed");
  m.attr("_C_API") = nb::capsule(&api, sd::package_api_capsule);
}

} // namespace streamlike_package
