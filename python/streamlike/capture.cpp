// CUDA graph capture in Python: `with streamlike.capture(stream, mode=...) as graph:` over
// streamlike::capture_scope (include/streamlike/capture.hpp), the graph owners streamlike.Graph and
// streamlike.GraphExec (include/streamlike/graph.hpp), and streamlike.CaptureInfo
// (include/streamlike/capture_state.hpp).
#include "package.hpp"

#include <nanobind/stl/string.h>

#include <streamlike/capture.hpp>
#include <streamlike/capture_state.hpp>
#include <streamlike/graph.hpp>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace streamlike_package {
namespace {

using streamlike::capture_mode;
using streamlike::capture_scope;
using streamlike::graph;
using streamlike::graph_exec;

PyTypeObject* capture_info_type = nullptr;

const char* status_name(streamlike::capture_status status) noexcept {
  switch (status) {
    case streamlike::capture_status::none: return "none";
    case streamlike::capture_status::active: return "active";
    case streamlike::capture_status::invalidated: return "invalidated";
  }
  return "unknown";
}

capture_mode mode_from(const std::string& name) {
  if (name == "global") return capture_mode::global;
  if (name == "thread_local") return capture_mode::thread_local_;
  if (name == "relaxed") return capture_mode::relaxed;
  throw nb::value_error(("capture: mode must be 'global', 'thread_local' or 'relaxed', got '" + name + "'").c_str());
}

/// What streamlike.capture(...) returns: a context manager around one capture_scope. It holds
/// the stream object (the scope's stream must outlive it) and the Graph it hands out on entry,
/// which it fills when the capture ends. Two threads may enter or leave one Capture at once: its
/// methods lock the instance (nb::lock_self: a critical section in the free-threaded build, the
/// GIL otherwise, which none of them releases), so `entered` and `scope` change under the lock.
/// The garbage collector sees both references (capture_traverse), so a stream object that holds
/// its own Capture is collected.
struct capture_context {
  nb::object stream;
  stream_view view;
  capture_mode mode;
  std::optional<capture_scope> scope;
  nb::object graph_object;
  bool entered = false;
};

nb::object enter(capture_context& c) {
  if (c.entered) {
    throw nb::type_error("capture: this capture was entered already; call streamlike.capture(stream) again for "
                         "another");
  }
  c.entered = true;
  c.scope.emplace(capture_scope::begin(c.view, c.mode));
  c.graph_object = nb::cast(graph{});
  return c.graph_object;
}

bool exit(capture_context& c, nb::handle exc_type, nb::handle, nb::handle) {
  if (!c.scope) return false;
  capture_scope scope = std::move(*c.scope);
  c.scope.reset();
  if (!exc_type.is_none()) return false; // the scope's destructor ends the capture and discards its graph
  graph built = scope.end();             // throws if the capture was invalidated or left unjoined
  // Another thread may be reading the Graph handed out on entry: written under its lock.
  const nb::ft_object_guard graph_lock(c.graph_object);
  *nb::inst_ptr<graph>(c.graph_object) = std::move(built);
  return false;
}

int capture_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  const capture_context* c = nb::inst_ptr<capture_context>(self);
  Py_VISIT(c->stream.ptr());
  Py_VISIT(c->graph_object.ptr());
  return 0;
}

int capture_clear(PyObject* self) {
  if (!nb::inst_ready(self)) return 0;
  capture_context* c = nb::inst_ptr<capture_context>(self);
  // An abandoned capture ends (discarding its graph) while its stream object is still held.
  c->scope.reset();
  nb::object stream = std::move(c->stream);
  nb::object graph_object = std::move(c->graph_object);
  return 0; // the references drop here, with the fields already empty
}

PyType_Slot capture_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(&capture_traverse)},
                               {Py_tp_clear, reinterpret_cast<void*>(&capture_clear)},
                               {0, nullptr}};

nb::object graph_repr(const graph& g) {
  if (!g)
    return nb::steal(PyUnicode_FromString("<streamlike.Graph empty (its capture has not ended, or was discarded)>"));
  return nb::steal(
      PyUnicode_FromFormat("<streamlike.Graph handle=%p nodes=%zu>", static_cast<void*>(g.get()), g.node_count()));
}

nb::object exec_repr(const graph_exec& e) {
  return nb::steal(PyUnicode_FromFormat("<streamlike.GraphExec handle=%p>", static_cast<void*>(e.get())));
}

} // namespace

PyObject* capture_info_object(const streamlike::capture_state& state) noexcept {
  PyObject* info = PyStructSequence_New(capture_info_type);
  if (info == nullptr) return nullptr;
  PyObject* status = PyUnicode_FromString(status_name(state.status));
  PyObject* id = PyLong_FromUnsignedLongLong(state.id);
  if (status == nullptr || id == nullptr) {
    Py_XDECREF(status);
    Py_XDECREF(id);
    Py_DECREF(info);
    return nullptr;
  }
  PyStructSequence_SetItem(info, 0, status);
  PyStructSequence_SetItem(info, 1, id);
  return info;
}

void bind_capture(nb::module_& m) {
  static PyStructSequence_Field fields[] = {
      {"status", "'none' (not capturing), 'active', or 'invalidated' (still to be ended; yields no graph)"},
      {"id", "the capture's process-unique id; 0 when not capturing"},
      {nullptr, nullptr}};
  static PyStructSequence_Desc desc = {"streamlike.CaptureInfo",
                                       "A stream's CUDA graph capture state (cudaStreamGetCaptureInfo).", fields, 2};
  capture_info_type = PyStructSequence_NewType(&desc);
  if (capture_info_type == nullptr) throw nb::python_error();
  m.attr("CaptureInfo") = nb::steal(reinterpret_cast<PyObject*>(capture_info_type));
  Py_INCREF(capture_info_type); // kept for the life of the process

  nb::class_<graph_exec>(m, "GraphExec", nb::is_weak_referenceable(),
                         "An executable CUDA graph (streamlike::graph_exec), from Graph.instantiate(); destroyed with "
                         "the last reference.")
      .def_prop_ro(
          "handle", [](const graph_exec& e) { return reinterpret_cast<std::uintptr_t>(e.get()); },
          "The cudaGraphExec_t address, as an int.")
      .def(
          "launch", [](const graph_exec& e, nb::handle stream) { e.launch(stream_argument(stream)); },
          nb::arg("stream"), "Queues one run of the graph on `stream` (any stream object); refused while it captures.")
      .def(
          "upload", [](const graph_exec& e, nb::handle stream) { e.upload(stream_argument(stream)); },
          nb::arg("stream"), "Uploads the graph ahead of its first launch on `stream`; refused while it captures.")
      .def("__repr__", &exec_repr)
      .def("__reduce__", [](const graph_exec&) { refuse_pickle_of("streamlike.GraphExec"); });

  // A Graph is written once, when its capture ends (exit, under the Graph's lock, perhaps on
  // another thread than one reading it): its readers lock it too.
  nb::class_<graph>(m, "Graph", nb::is_weak_referenceable(),
                    "A CUDA graph (streamlike::graph), from `with streamlike.capture(stream) as graph:` (filled when "
                    "the block ends); destroyed with the last reference.")
      .def_prop_ro(
          "handle", [](const graph& g) { return reinterpret_cast<std::uintptr_t>(g.get()); }, nb::lock_self(),
          "The cudaGraph_t address, as an int (0 until the capture has ended).")
      .def_prop_ro("node_count", &graph::node_count, nb::lock_self(), "The number of nodes.")
      .def(
          "__bool__", [](const graph& g) { return static_cast<bool>(g); }, nb::lock_self(),
          "True once the capture has ended.")
      .def(
          "instantiate", [](const graph& g, unsigned long long flags) { return g.instantiate(flags); },
          nb::arg("flags") = 0, nb::lock_self(), "An executable graph (GraphExec), to launch on any stream.")
      .def("__repr__", &graph_repr, nb::lock_self())
      .def("__reduce__", [](const graph&) { refuse_pickle_of("streamlike.Graph"); });

  nb::class_<capture_context>(m, "Capture", nb::type_slots(capture_slots),
                              "What streamlike.capture(stream) returns: `with` it to record the work queued on the "
                              "stream into the Graph it gives.")
      .def("__enter__", &enter, nb::lock_self())
      .def("__exit__", &exit, nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("traceback").none(),
           nb::lock_self())
      .def(
          "__repr__",
          [](const capture_context& c) {
            return nb::steal(PyUnicode_FromFormat("<streamlike.Capture stream=%p %s>", static_cast<void*>(c.view.get()),
                                                  c.scope ? "active" : (c.entered ? "ended" : "not entered")));
          },
          nb::lock_self())
      .def("__reduce__", [](const capture_context&) { refuse_pickle_of("streamlike.Capture"); });
  for (const char* name : {"Graph", "GraphExec", "Capture"}) m.attr(name).attr("__module__") = "streamlike";

  m.def(
      "capture",
      [](nb::handle stream, const std::string& mode) {
        capture_context c{nb::borrow(stream), stream_argument(stream), mode_from(mode), std::nullopt, nb::none()};
        return c;
      },
      nb::arg("stream"), nb::arg("mode") = "global",
      "capture(stream, mode='global') -> Capture: `with streamlike.capture(stream) as graph:` records the work "
      "queued on `stream` in the block into `graph` (streamlike::capture_scope). mode: 'global', 'thread_local' or "
      "'relaxed'. An exception in the block ends the capture and discards the graph.");
}

} // namespace streamlike_package
