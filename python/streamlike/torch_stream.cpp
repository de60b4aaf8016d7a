// torch's stream object made current by `use` (docs/current-stream.md, "Providers": torch): the
// scope's torch provider makes the handle current; for a torch.cuda.Stream, torch's own setter then
// makes the very object current (let_torch_see_its_object, package.hpp).
#include "package.hpp"
#include "use_entry.hpp"

#include <streamlike/python/detail/cpython.hpp>

#include <atomic>
#include <mutex>

namespace streamlike_package {

namespace {

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

} // namespace

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

} // namespace streamlike_package
