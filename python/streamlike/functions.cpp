// The module's functions: ordering (wait, wait_external), the integer decoders,
// retain_until_done. Each is one call into the library or the casters.
#include "package.hpp"

#include <streamlike/event.hpp>
#include <streamlike/ordering.hpp>
#include <streamlike/python/detail/py_ref.hpp>
#include <streamlike/retain_until_done.hpp>
#include <streamlike/stream_encodings.hpp>

#include <optional>

namespace streamlike_package {
namespace {

/// wait(consumer, producer): work queued on consumer from now on waits for producer: the work
/// queued on a stream so far, or an Event (streamlike::wait(stream, event), which refuses by name
/// an event recorded outside the capture a capturing consumer is in).
PyObject* module_wait(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError,
                 "wait() takes exactly 2 arguments (consumer: a stream object, producer: a stream object or an "
                 "Event), got %zd",
                 nargs);
    return nullptr;
  }
  stream_view consumer = stream_view::legacy_default();
  const char* source = nullptr;
  if (!read_stream(args[0], consumer, source)) return nullptr;
  if (is_event(args[1])) {
    const streamlike::event* e = event_argument("wait", args[1]);
    if (e == nullptr) return nullptr;
    return guarded([&]() -> PyObject* {
      streamlike::wait(consumer, *e);
      Py_RETURN_NONE;
    });
  }
  stream_view producer = stream_view::legacy_default();
  if (!read_stream(args[1], producer, source)) return nullptr;
  return guarded([&]() -> PyObject* {
    consumer.wait(producer);
    Py_RETURN_NONE;
  });
}

/// wait_external(consumer, event): streamlike::wait_external, the explicit external wait.
PyObject* module_wait_external(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError,
                 "wait_external() takes exactly 2 arguments (consumer: a stream object, event: an Event), got %zd",
                 nargs);
    return nullptr;
  }
  stream_view consumer = stream_view::legacy_default();
  const char* source = nullptr;
  if (!read_stream(args[0], consumer, source)) return nullptr;
  const streamlike::event* e = event_argument("wait_external", args[1]);
  if (e == nullptr) return nullptr;
  return guarded([&]() -> PyObject* {
    streamlike::wait_external(consumer, *e);
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
  return guarded([&] { return new_view(streamlike::from_address(address), nullptr, "address"); });
}

/// retain_until_done(stream, obj): streamlike::retain_until_done with a reference to obj, dropped
/// (taking the GIL) on the library's release thread once the GPU is done with it.
PyObject* module_retain_until_done(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError,
                 "retain_until_done() takes exactly 2 arguments (stream: a stream object, obj: any object), got %zd",
                 nargs);
    return nullptr;
  }
  stream_view view = stream_view::legacy_default();
  const char* source = nullptr;
  if (!read_stream(args[0], view, source)) return nullptr;
  return guarded([&]() -> PyObject* {
    streamlike::retain_until_done(view, sd::py_ref(args[1]));
    Py_RETURN_NONE;
  });
}

PyObject* optional_view(const std::optional<stream_view>& view, const char* source) {
  if (!view) Py_RETURN_NONE;
  return new_view(*view, nullptr, source);
}

} // namespace

void bind_functions(nb::module_& m) {
  static PyMethodDef functions[] = {
      {"wait", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&module_wait)), METH_FASTCALL,
       "wait(consumer, producer): work queued on consumer from now on waits for producer: the work queued on a "
       "stream object so far, or an Event (while consumer captures, one recorded in the same capture)."},
      {"wait_external", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&module_wait_external)),
       METH_FASTCALL,
       "wait_external(consumer, event): consumer waits for event as an external wait; in a capture, an event-wait "
       "node that waits, at each launch, for whatever event was last recorded on by then."},
      {"from_address", &module_from_address, METH_O,
       "from_address(address: int) -> StreamView: a raw cudaStream_t address (0: the legacy default stream)."},
      {"retain_until_done", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&module_retain_until_done)),
       METH_FASTCALL,
       "retain_until_done(stream, obj): keeps obj alive until the work queued on stream so far is done, or, while "
       "stream captures a CUDA graph, until every graph made from the capture is destroyed."},
      {nullptr, nullptr, 0, nullptr}};
  if (PyModule_AddFunctions(m.ptr(), functions) != 0) throw nb::python_error();

  m.def(
      "from_dlpack_stream",
      [](streamlike::python::dlpack_stream s) { return nb::steal(optional_view(s.view, "dlpack")); },
      nb::arg("stream").none(),
      "The stream a DLPack __dlpack__(stream=...) integer names; None for -1 (no synchronization).");
  m.def(
      "from_cai_stream",
      [](streamlike::python::cai_stream s) { return nb::steal(optional_view(s.view, "cuda_array_interface")); },
      nb::arg("stream").none(),
      "The stream a __cuda_array_interface__ 'stream' field names; None for None (no synchronization).");
}

} // namespace streamlike_package
