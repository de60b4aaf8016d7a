// streamlike.Event: streamlike::event (include/streamlike/event.hpp), its methods called as they
// are, so Python has the library's rules (capture refusals included).
#include "package.hpp"

#include <streamlike/event.hpp>

#include <cstdint>

namespace streamlike_package {
namespace {

using streamlike::event;

nb::object event_repr(const event& e) {
  return nb::steal(PyUnicode_FromFormat("<streamlike.Event handle=%p>", static_cast<void*>(e.get())));
}

// streamlike::elapsed_ms, its capture check seeing CuPy's current stream too.
float checked_elapsed_ms(const event& start, const event& end) {
  register_cupy_if_loaded();
  return streamlike::elapsed_ms(start, end);
}

} // namespace

bool is_event(PyObject* obj) noexcept { return nb::isinstance<event>(nb::handle(obj)); }

const event* event_argument(const char* where, PyObject* obj) noexcept {
  if (is_event(obj)) {
    if (nb::inst_ready(nb::handle(obj))) return nb::inst_ptr<event>(nb::handle(obj));
    PyErr_Format(PyExc_TypeError, "%s: the Event was never initialized (Event.__new__); make one with Event.create()",
                 where);
    return nullptr;
  }
  PyErr_Format(PyExc_TypeError,
               "%s: expected a streamlike.Event (made by Stream.record() or Event.create()), got an object of type "
               "'%s'",
               where, Py_TYPE(obj)->tp_name);
  return nullptr;
}

void bind_event(nb::module_& m) {
  nb::class_<event>(m, "Event", nb::is_weak_referenceable(),
                    "A CUDA event (streamlike::event): made by Stream.record() or Event.create(); destroyed with the "
                    "last reference.")
      .def_static(
          "create",
          [](nb::handle device_arg, bool timing) {
            streamlike::event_options options{.timing = timing};
            if (!read_device("Event.create", device_arg.ptr(), options.device)) throw nb::python_error();
            return event::create(options);
          },
          nb::arg("device").none() = nb::none(), nb::arg("timing") = false,
          "create(device=None, timing=False) -> Event: a new event (nothing recorded yet) on `device`.")
      .def_prop_ro(
          "handle", [](const event& e) { return reinterpret_cast<std::uintptr_t>(e.get()); },
          "The cudaEvent_t address, as an int.")
      .def(
          "record", [](event& e, nb::handle stream) { e.record(stream_argument(stream)); }, nb::arg("stream"),
          "Captures the work queued on `stream` (any stream object) so far.")
      .def(
          "sync",
          [](const event& e) {
            register_cupy_if_loaded();
            switch (finished_within_poll([&] { return e.is_done(); })) {
              case poll_result::finished: return;
              case poll_result::threw:
                e.sync(); // reports the refusal or the error, GIL held (finished_within_poll)
                return;
              case poll_result::unfinished: break;
            }
            const nb::gil_scoped_release unlocked;
            e.sync();
          },
          "Blocks until the recorded work has completed (the GIL is released while it waits).")
      .def(
          "is_done",
          [](const event& e) {
            register_cupy_if_loaded();
            return e.is_done();
          },
          "True once the recorded work has completed.")
      .def("elapsed_ms", &checked_elapsed_ms, nb::arg("end"),
           "Milliseconds from this event to `end`; both recorded with timing and completed.")
      .def("__repr__", &event_repr)
      .def("__reduce__", [](const event&) { refuse_pickle_of("streamlike.Event"); });
  m.attr("Event").attr("__module__") = "streamlike";
  m.def("elapsed_ms", &checked_elapsed_ms, nb::arg("start"), nb::arg("end"),
        "Milliseconds between two timed events (streamlike::elapsed_ms).");
}

} // namespace streamlike_package
