// streamlike.StreamView: a non-owning view of any stream object's stream, holding the object.
// A plain CPython type (not a nanobind class) so that it constructs through vectorcall, without an
// argument tuple (bench/python/bench_package.py times it).
#include "package.hpp"

#include <structmember.h>

#include <cstddef>
#include <cstring>
#include <new>
#include <utility>

namespace streamlike_package {

PyObject* new_view(stream_view view, PyObject* exporter, const char* source) noexcept {
  PyObject* self = view_type->tp_alloc(view_type, 0);
  if (self == nullptr) return nullptr;
  view_object* v = as_view(self);
  ::new (static_cast<void*>(&v->view)) stream_view(canonical(view));
  ::new (static_cast<void*>(&v->owner)) shared_stream();
  v->exporter = exporter;
  Py_XINCREF(exporter);
  v->source = source;
  return self;
}

namespace {

/// Whether `obj`'s type has the special method `name` (looked up as Python looks them up).
[[nodiscard]] bool type_has(PyObject* obj, PyObject* name) noexcept {
  PyObject* method = _PyType_Lookup(Py_TYPE(obj), name); // borrowed; only compared
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
          PyObject* self = new_view(stream_view{owner.get()}, obj, source_owned);
          if (self != nullptr) {
            as_view(self)->owner = std::move(owner);
            as_view(self)->block_object = share_block_object(as_view(self)->owner);
          }
          return self;
        }
        case sd::owned_read::not_offered: break; // returned None: the protocol's TypeError follows
      }
    }
  }
  stream_view view = stream_view::legacy_default();
  const char* source = nullptr;
  if (!read_stream(obj, view, source)) return nullptr;
  return new_view(view, obj, source);
}

/// The TypeError for a constructor not given exactly one positional argument.
void wrong_arguments(const char* what, Py_ssize_t nargs, Py_ssize_t nkw) noexcept {
  PyErr_Format(PyExc_TypeError,
               "%s() takes exactly one positional argument, the stream object (anything with __cuda_stream__); "
               "got %zd positional and %zd keyword arguments%s",
               what, nargs, nkw, std::strcmp(what, "Stream") == 0 ? "; Stream.create() makes a new stream" : "");
}

PyObject* view_vectorcall(PyObject*, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs != 1 || nkw != 0) {
    wrong_arguments("StreamView", nargs, nkw);
    return nullptr;
  }
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

// As a Stream's (stream.cpp): the exporter, and the owning reference a view took from an object's
// __cuda_stream_owned__ where its block holds a Python object.
int view_traverse(PyObject* self, visitproc visit, void* arg) {
  view_object* v = as_view(self);
  Py_VISIT(v->exporter);
  if (const int failed = visit_block_share(self, v->owner, v->block_object, visit, arg)) return failed;
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int view_clear(PyObject* self) {
  view_object* v = as_view(self);
  PyObject* exporter = std::exchange(v->exporter, nullptr);
  clear_block_share(self, v->owner, v->block_object);
  Py_XDECREF(exporter);
  return 0;
}

void view_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  view_object* v = as_view(self);
  if (v->weakrefs != nullptr) PyObject_ClearWeakRefs(self);
  (void)view_clear(self);
  v->facts.reset();
  v->owner.~shared_stream(); // releases an owning reference (never throws)
  type->tp_free(self);
  Py_DECREF(type);
}

} // namespace

void bind_view(nb::module_& m) {
  static PyMemberDef members[] = {
      {"__weaklistoffset__", T_PYSSIZET, static_cast<Py_ssize_t>(offsetof(view_object, weakrefs)), READONLY, nullptr},
      {nullptr, 0, 0, 0, nullptr}};
  static PyType_Slot slots[] = {
      {Py_tp_new, reinterpret_cast<void*>(&view_new)},
      {Py_tp_dealloc, reinterpret_cast<void*>(&view_dealloc)},
      {Py_tp_traverse, reinterpret_cast<void*>(&view_traverse)},
      {Py_tp_clear, reinterpret_cast<void*>(&view_clear)},
      {Py_tp_repr, reinterpret_cast<void*>(&common_repr)},
      {Py_tp_hash, reinterpret_cast<void*>(&common_hash)},
      {Py_tp_richcompare, reinterpret_cast<void*>(&common_richcompare)},
      {Py_tp_methods, common_methods},
      {Py_tp_getset, common_getset},
      {Py_tp_members, members},
      {Py_tp_doc, const_cast<char*>("StreamView(obj): a non-owning view of any stream object's CUDA stream, keeping "
                                    "the object alive.")},
      {0, nullptr}};
  static PyType_Spec spec = {"streamlike.StreamView", static_cast<int>(sizeof(view_object)), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, slots};
  view_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
  if (view_type == nullptr) throw nb::python_error();
  view_type->tp_vectorcall = &view_vectorcall;
  m.attr("StreamView") = nb::borrow(reinterpret_cast<PyObject*>(view_type));
}

/// The TypeError of Stream's constructor (stream.cpp shares it).
void wrong_stream_arguments(Py_ssize_t nargs, Py_ssize_t nkw) noexcept { wrong_arguments("Stream", nargs, nkw); }

} // namespace streamlike_package
