// A C type shaped like torch._C._CudaStreamBase, for the CPU tests of the casters' torch shortcut
// (docs/python-bridge.md, "Known exporters"): read-only `long long` members device_type,
// device_index and stream_id (torch's key for a stream) and a `cuda_stream` getter that counts
// its calls (and raises for stream_id -1). Python subclasses give it torch's __cuda_stream__
// method (test_torch.py). reader_of() tells the tests how the casters read an object.
#ifndef STREAMLIKE_TEST_PYTHON_FAKE_TORCH_STREAM_HPP
#define STREAMLIKE_TEST_PYTHON_FAKE_TORCH_STREAM_HPP

#include <Python.h>
#include <structmember.h> // T_LONGLONG, READONLY: the member codes of torch's type (all Python versions)

#include <streamlike/python/detail/known_exporters.hpp>

#include <cstddef>
#include <string>

namespace bridge_test {

struct fake_torch_stream {
  PyObject_HEAD
  long long device_type;
  long long device_index;
  long long stream_id;
  long long handle; // what `cuda_stream` returns: the tests keep it a function of the key, as torch's is
};

/// How often any fake's `cuda_stream` getter ran (per extension module: hidden symbols).
inline long long fake_torch_read_count = 0;

/// The count, for Python (bound by bridge_functions.hpp).
inline long long fake_torch_reads() noexcept { return fake_torch_read_count; }

inline PyObject* fake_torch_stream_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"stream_id", "device_index", "handle", nullptr};
  long long stream_id = 0, device_index = 0, handle = 0;
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "LLL", const_cast<char**>(keywords), &stream_id, &device_index,
                                  &handle) == 0) {
    return nullptr;
  }
  PyObject* self = type->tp_alloc(type, 0);
  if (self == nullptr) return nullptr;
  auto* s = reinterpret_cast<fake_torch_stream*>(self);
  s->device_type = 1; // CUDA, as torch numbers it
  s->device_index = device_index;
  s->stream_id = stream_id;
  s->handle = handle;
  return self;
}

inline PyObject* fake_torch_stream_cuda_stream(PyObject* self, void*) {
  ++fake_torch_read_count;
  const auto* s = reinterpret_cast<fake_torch_stream*>(self);
  if (s->stream_id == -1) {
    PyErr_SetString(PyExc_RuntimeError, "fake torch stream: cuda_stream failed");
    return nullptr;
  }
  return PyLong_FromLongLong(s->handle);
}

/// How the casters read `obj`: the words of its type's reader (known_exporters.hpp), comma-
/// separated: "torch" (reads `cuda_stream`), "key" (remembers handles by torch's key), "getter"
/// (calls `cuda_stream`'s C getter without a lookup), "no-owned" (no __cuda_stream_owned__).
inline std::string reader_of(PyObject* obj) {
  namespace sd = streamlike::python::detail;
  PyObject* name = sd::cuda_stream_name();
  if (name == nullptr) return "error";
  const sd::exporter_reader reader = sd::reader_for(obj, name);
  std::string words;
  const auto add = [&words](bool set, const char* word) {
    if (!set) return;
    if (!words.empty()) words += ",";
    words += word;
  };
  add(reader.torch, "torch");
  add(reader.layout.known(), "key");
  add(reader.handle.get != nullptr, "getter");
  add(reader.owned_absent, "no-owned");
  return words;
}

/// The type (a new reference), made once per call: each test module makes its own.
inline PyObject* make_fake_torch_stream_type() {
  static PyMemberDef members[] = {
      {"device_type", T_LONGLONG, offsetof(fake_torch_stream, device_type), READONLY, nullptr},
      {"device_index", T_LONGLONG, offsetof(fake_torch_stream, device_index), READONLY, nullptr},
      {"stream_id", T_LONGLONG, offsetof(fake_torch_stream, stream_id), READONLY, nullptr},
      {nullptr, 0, 0, 0, nullptr}};
  static PyGetSetDef getset[] = {{"cuda_stream", &fake_torch_stream_cuda_stream, nullptr, nullptr, nullptr},
                                 {nullptr, nullptr, nullptr, nullptr, nullptr}};
  static PyType_Slot slots[] = {{Py_tp_new, reinterpret_cast<void*>(&fake_torch_stream_new)},
                                {Py_tp_members, members},
                                {Py_tp_getset, getset},
                                {0, nullptr}};
  static PyType_Spec spec = {"streamlike_test.FakeTorchStreamBase", static_cast<int>(sizeof(fake_torch_stream)), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
  return PyType_FromSpec(&spec);
}

} // namespace bridge_test

#endif // STREAMLIKE_TEST_PYTHON_FAKE_TORCH_STREAM_HPP
