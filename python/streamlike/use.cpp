// `with streamlike.use(stream, device=None):` (docs/current-stream.md, "Python"): a
// scoped_current_stream entered and left from Python, on one thread (bind_use, package.hpp).
#include "package.hpp"
#include "use_entry.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include <streamlike/current_stream.hpp>
#include <streamlike/python/detail/saved_error.hpp>
#include <streamlike/python/detail/translate_exceptions.hpp>
#include <streamlike/python/nanobind.hpp>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace nb = nanobind;
using streamlike::stream_view;

namespace streamlike_package {

namespace {

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
    streamlike_package::register_dlpack_torch_if_needed();
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

void bind_use(nb::module_& m) {
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
}

} // namespace streamlike_package
