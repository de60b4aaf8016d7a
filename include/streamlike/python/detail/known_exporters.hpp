// streamlike/python/detail/known_exporters.hpp: which Python stream types the casters read
// without calling __cuda_stream__ (today: torch's), decided once per type and cached
// (docs/python-bridge.md, "Known exporters").
#ifndef STREAMLIKE_PYTHON_DETAIL_KNOWN_EXPORTERS_HPP
#define STREAMLIKE_PYTHON_DETAIL_KNOWN_EXPORTERS_HPP

#include <streamlike/python/detail/cpython.hpp>
#if PY_VERSION_HEX < 0x030C0000
#  include <structmember.h> // T_LONGLONG, READONLY (in Python.h from 3.12 as Py_T_LONGLONG, Py_READONLY)
#endif

#include <atomic>
#include <cstdlib>
#include <utility>

namespace streamlike::python::detail {

/// False if STREAMLIKE_PYTHON_PROTOCOL_ONLY is set (to anything but "" or "0"): then every
/// exporter's __cuda_stream__ is called. Read once per process.
[[nodiscard]] inline bool known_exporters_enabled() noexcept {
  static const bool enabled = [] {
    const char* value = std::getenv("STREAMLIKE_PYTHON_PROTOCOL_ONLY");
    return value == nullptr || value[0] == '\0' || (value[0] == '0' && value[1] == '\0');
  }();
  return enabled;
}

[[nodiscard]] inline bool attribute_is(PyObject* obj, const char* attribute, const char* expected) noexcept {
  const scoped_ref value = scoped_ref::steal(PyObject_GetAttrString(obj, attribute));
  if (!value) {
    PyErr_Clear();
    return false;
  }
  return PyUnicode_Check(value.get()) && PyUnicode_CompareWithASCIIString(value.get(), expected) == 0;
}

/// Whether the class's own __cuda_stream__ is torch's. Looking it up on the type also gives the
/// type a version tag (CPython assigns them on lookup).
[[nodiscard]] inline bool has_torch_method(PyTypeObject* type, PyObject* name) noexcept {
  const scoped_ref method = scoped_ref::steal(PyObject_GetAttr(reinterpret_cast<PyObject*>(type), name));
  if (!method) {
    PyErr_Clear();
    return false;
  }
  return PyFunction_Check(method.get()) && attribute_is(method.get(), "__module__", "torch.cuda.streams") &&
         attribute_is(method.get(), "__qualname__", "Stream.__cuda_stream__");
}

/// Where a torch stream object keeps the three integers that identify its stream.
struct torch_stream_layout {
  Py_ssize_t device_type = -1; // byte offsets into the object; -1: not published
  Py_ssize_t device_index = -1;
  Py_ssize_t stream_id = -1;

  [[nodiscard]] bool known() const noexcept { return device_type >= 0 && device_index >= 0 && stream_id >= 0; }
};

// PyMemberDef's codes for a `long long` member and for read-only (other names before 3.12).
#if PY_VERSION_HEX >= 0x030C0000
inline constexpr int long_long_member = Py_T_LONGLONG;
inline constexpr int read_only_member = Py_READONLY;
#else
inline constexpr int long_long_member = T_LONGLONG;
inline constexpr int read_only_member = READONLY;
#endif

/// The offset of a read-only `long long` member `attribute` of `type`, or -1.
[[nodiscard]] inline Py_ssize_t long_long_member_offset(PyTypeObject* type, const char* attribute) noexcept {
  const scoped_ref descriptor = scoped_ref::steal(PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), attribute));
  if (!descriptor) {
    PyErr_Clear();
    return -1;
  }
  if (Py_TYPE(descriptor.get()) != &PyMemberDescr_Type) return -1; // a data descriptor: no instance can shadow it
  // A member of `type` or a base: a member descriptor planted in a class from an unrelated type
  // would give an offset into another layout (reading the attribute refuses such an object).
  if (PyType_IsSubtype(type, PyDescr_TYPE(descriptor.get())) == 0) return -1;
  const PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(descriptor.get())->d_member;
  if (member->type == long_long_member && (member->flags & read_only_member) != 0 && member->offset >= 0) {
    return member->offset;
  }
  return -1;
}

/// "cuda_stream", interned: torch's stream handle attribute.
[[nodiscard]] inline PyObject* torch_handle_name() noexcept {
  static std::atomic<PyObject*> slot{nullptr};
  return interned(slot, "cuda_stream");
}

/// A C getter of a getset descriptor and its closure: what reading the attribute on an instance
/// would call.
struct handle_getter {
  getter get = nullptr; // nullptr: none; read the attribute
  void* closure = nullptr;
};

/// The C getter that `obj.cuda_stream` runs for every instance `obj` of `type`, or none. It is
/// that getter when the attribute lookup is the generic one (no __getattribute__ or __getattr__)
/// and finds a getset descriptor (torch's `cuda_stream`): a data descriptor, which an instance's
/// __dict__ cannot shadow, of a type `type` derives from (the check the descriptor makes on each
/// call, made here once for the type). `descriptor` receives a strong reference to it, to keep
/// with the getter.
[[nodiscard]] inline handle_getter direct_handle_getter(PyTypeObject* type, scoped_ref& descriptor) noexcept {
  if (type->tp_getattro != PyObject_GenericGetAttr) return {};
  PyObject* name = torch_handle_name();
  if (name == nullptr) {
    PyErr_Clear();
    return {};
  }
  PyObject* found = _PyType_Lookup(type, name); // borrowed; what the generic lookup finds first
  if (found == nullptr || Py_TYPE(found) != &PyGetSetDescr_Type) return {};
  const PyGetSetDef* def = reinterpret_cast<PyGetSetDescrObject*>(found)->d_getset;
  if (def == nullptr || def->get == nullptr || PyType_IsSubtype(type, PyDescr_TYPE(found)) == 0) return {};
  descriptor = scoped_ref::borrow(found);
  return {def->get, def->closure};
}

/// How to read the handle of an object of one type.
struct exporter_reader {
  bool torch = false;         // read `cuda_stream` instead of calling __cuda_stream__
  torch_stream_layout layout; // if known: remember handles by the stream's key
  handle_getter handle;       // if set: `cuda_stream` is this C getter, called without a lookup
  bool owned_absent = false;  // known: the type has no __cuda_stream_owned__ (or it is None)
};

/// `descriptor`: a strong reference to what `reader.handle` came from, if anything.
[[nodiscard]] inline exporter_reader classify_type(PyTypeObject* type, PyObject* name,
                                                   scoped_ref& descriptor) noexcept {
  exporter_reader reader;
  if (PyObject* owned_name = cuda_stream_owned_name(); owned_name != nullptr) {
    PyObject* owned = _PyType_Lookup(type, owned_name); // borrowed; read_owned's own lookup
    reader.owned_absent = owned == nullptr || owned == Py_None;
  } else {
    PyErr_Clear();
  }
  if (!has_torch_method(type, name)) return reader;
  reader.torch = true;
  reader.layout = {long_long_member_offset(type, "device_type"), long_long_member_offset(type, "device_index"),
                   long_long_member_offset(type, "stream_id")};
  reader.handle = direct_handle_getter(type, descriptor);
  return reader;
}

/// The reader for `obj`'s type (`name`: "__cuda_stream__"), cached for a few types, keyed on the
/// type's version tag so a changed class is classified again. Each cached type is kept alive by
/// the cache, so its address cannot be reused by another type while cached. GIL builds only: a
/// free-threaded build always calls the method.
[[nodiscard]] inline exporter_reader reader_for(PyObject* obj, PyObject* name) noexcept {
#if defined(Py_GIL_DISABLED)
  (void)obj;
  (void)name;
  return {};
#else
  if (!known_exporters_enabled()) return {};
  struct entry {
    PyTypeObject* type = nullptr; // strong reference
    unsigned int version = 0;
    exporter_reader reader;
    PyObject* descriptor = nullptr; // strong reference: where reader.handle came from, if set
  };
  constexpr unsigned slots = 8;
  static entry cache[slots];
  static unsigned next = 0;

  PyTypeObject* type = Py_TYPE(obj);
  entry* slot = nullptr;
  for (entry& e : cache) {
    if (e.type == type) {
      if (e.version != 0 && e.version == type->tp_version_tag) return e.reader;
      slot = &e; // the type changed since: classify again, in place
      break;
    }
  }
  // Classifying runs Python code (attribute lookups), which may even assign obj.__class__: the
  // type is held meanwhile, and if obj is no longer of it, this call reads through the protocol.
  const scoped_ref held_type = scoped_ref::borrow(reinterpret_cast<PyObject*>(type));
  scoped_ref descriptor;
  exporter_reader reader = classify_type(type, name, descriptor);
  if (Py_TYPE(obj) != type) return {};
  const unsigned int version = type->tp_version_tag;
  if (version == 0) { // no tag to key on: not cached, and no getter kept without its descriptor
    reader.handle = {};
    return reader;
  }
  PyTypeObject* evicted = nullptr;
  if (slot == nullptr) {
    slot = &cache[next];
    next = (next + 1) % slots;
    evicted = slot->type;
    Py_INCREF(type);
    slot->type = type;
  }
  PyObject* old_descriptor = std::exchange(slot->descriptor, nullptr);
  if (reader.handle.get != nullptr) {
    Py_INCREF(descriptor.get());
    slot->descriptor = descriptor.get();
  }
  slot->version = version;
  slot->reader = reader;
  // After the slot is consistent: a deallocation may run Python code (and assign obj.__class__).
  Py_XDECREF(old_descriptor);
  Py_XDECREF(evicted);
  if (Py_TYPE(obj) != type) return {};
  return reader;
#endif
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_KNOWN_EXPORTERS_HPP
