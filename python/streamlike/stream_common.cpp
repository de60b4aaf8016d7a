// What streamlike.StreamView and streamlike.Stream share: reading stream objects, the facts, the
// operations, repr, hashing and equality. Every operation is one call into the library, on the
// object's owning shared_stream where it has one, else on its stream_view.
#include "package.hpp"

#include <streamlike/detail/shared_stream_access.hpp>
#include <streamlike/event.hpp>
#include <streamlike/python/detail/reference_block.hpp>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <utility>

namespace streamlike_package {

PyTypeObject* stream_type = nullptr;
PyTypeObject* view_type = nullptr;

namespace {

/// What a facts cache holds: nothing (the Python object keeps the exporter alive).
struct facts_only {};

} // namespace

const shared_stream& facts_cache::get(stream_view view) {
  if (shared_stream* known = slot_.load(std::memory_order_acquire)) [[likely]]
    return *known;
  auto made = std::make_unique<shared_stream>(shared_stream::keep_alive(view, facts_only{}));
  shared_stream* expected = nullptr;
  if (slot_.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel, std::memory_order_acquire)) {
    return *made.release();
  }
  return *expected; // another thread made it first
}

PyObject* share_block_object(const shared_stream& owner) noexcept {
  const sd::reference_block* block = sd::reference_block::of(owner);
  if (block == nullptr) return nullptr;
  block->add_python_owner();
  return Py_NewRef(block->object());
}

int visit_block_share(PyObject* self, const shared_stream& owner, PyObject* block_object, visitproc visit,
                      void* arg) noexcept {
  if (block_object == nullptr) return 0;
  Py_VISIT(block_object); // this object's own reference
  const sd::reference_block* block = sd::reference_block::of(owner);
  if (block != nullptr && block->visits_block_reference(self)) Py_VISIT(block->object()); // the block's
  return 0;
}

void clear_block_share(PyObject* self, shared_stream& owner, PyObject*& block_object) noexcept {
  if (block_object == nullptr) return;
  if (const sd::reference_block* block = sd::reference_block::of(owner)) block->remove_python_owner(self);
  shared_stream dropped = std::move(owner);
  PyObject* object = std::exchange(block_object, nullptr);
  dropped.reset(); // may release the block's reference to the object
  Py_DECREF(object);
}

bool read_stream(PyObject* obj, stream_view& out, const char*& source) noexcept {
  const sd::stream_read read = sd::read_stream(obj, out);
  source = source_of(read.route);
  return sd::report(obj, true, read.status) == sd::outcome::ok;
}

stream_view stream_argument(nb::handle obj) {
  stream_view view = stream_view::legacy_default();
  const char* source = nullptr;
  if (!read_stream(obj.ptr(), view, source)) throw nb::python_error();
  return view;
}

stream_view view_of(PyObject* self) noexcept {
  return is_stream(self) ? stream_view{as_stream(self)->base.handle} : as_view(self)->view;
}

namespace {

/// The owning shared_stream of a Stream or StreamView, or nullptr if it has none.
[[nodiscard]] const shared_stream* owner_of(PyObject* self) noexcept {
  const shared_stream& owner = is_stream(self) ? as_stream(self)->base.owner : as_view(self)->owner;
  return owner ? &owner : nullptr;
}

[[nodiscard]] PyObject* exporter_of(PyObject* self) noexcept {
  PyObject* e = is_stream(self) ? as_stream(self)->exporter : as_view(self)->exporter;
  return e != nullptr ? e : Py_None;
}

[[nodiscard]] const char* source_of(PyObject* self) noexcept {
  const char* s = is_stream(self) ? as_stream(self)->source : as_view(self)->source;
  return s != nullptr ? s : source_streamlike;
}

[[nodiscard]] PyObject* py_bool(bool value) noexcept { return PyBool_FromLong(value ? 1 : 0); }

} // namespace

const shared_stream& facts_of(PyObject* self) {
  if (const shared_stream* owner = owner_of(self)) return *owner;
  facts_cache& cache = is_stream(self) ? as_stream(self)->facts : as_view(self)->facts;
  return cache.get(view_of(self));
}

namespace {

// --- Facts: the shared_stream's accessors (cached; capture-safe, or refused by name) ------------

PyObject* get_device(PyObject* self, void*) {
  return guarded([&] { return PyLong_FromLong(facts_of(self).device()); });
}
PyObject* get_id(PyObject* self, void*) {
  return guarded([&] { return PyLong_FromUnsignedLongLong(facts_of(self).id()); });
}
PyObject* get_priority(PyObject* self, void*) {
  return guarded([&] { return PyLong_FromLong(facts_of(self).priority()); });
}
PyObject* get_flags(PyObject* self, void*) {
  return guarded([&] { return PyLong_FromUnsignedLong(facts_of(self).flags()); });
}
PyObject* get_handle(PyObject* self, void*) { return sd::handle_to_int(view_of(self).get()); }
PyObject* get_exporter(PyObject* self, void*) { return Py_NewRef(exporter_of(self)); }
PyObject* get_source(PyObject* self, void*) { return PyUnicode_FromString(source_of(self)); }
PyObject* get_is_default(PyObject* self, void*) { return py_bool(view_of(self).is_default()); }

// --- Operations: the library's, capture-safe (each works on a capturing stream or refuses by
// name before a CUDA call that would invalidate the capture) -------------------------------------

PyObject* get_is_capturing(PyObject* self, void*) {
  return guarded([&] {
    const shared_stream* owner = owner_of(self);
    return py_bool(owner != nullptr ? owner->is_capturing() : view_of(self).is_capturing());
  });
}

PyObject* get_capture_info(PyObject* self, void*) {
  return guarded([&] {
    const shared_stream* owner = owner_of(self);
    return capture_info_object(owner != nullptr ? owner->capture_info() : view_of(self).capture_info());
  });
}

PyObject* get_partition(PyObject* self, void*) { return partition_or_none(view_of(self)); }

PyObject* method_sync(PyObject* self, PyObject*) {
  // The GIL is released while the thread waits for the GPU, and only then (finished_within_poll);
  // `self` (and so its owner) stays alive: the caller holds it.
  register_cupy_if_loaded();
  const shared_stream* owner = owner_of(self);
  const stream_view view = view_of(self);
  const auto sync = [&] {
    if (owner != nullptr) {
      owner->sync();
    } else {
      view.sync();
    }
  };
  switch (finished_within_poll([&] { return owner != nullptr ? owner->is_done() : view.is_done(); })) {
    case poll_result::finished: Py_RETURN_NONE;
    case poll_result::threw:
      return guarded([&] { // reports the refusal or the error, GIL held (finished_within_poll)
        sync();
        Py_RETURN_NONE;
      });
    case poll_result::unfinished: break;
  }
  return unlocked(sync);
}

PyObject* method_is_done(PyObject* self, PyObject*) {
  register_cupy_if_loaded();
  return guarded([&] {
    const shared_stream* owner = owner_of(self);
    return py_bool(owner != nullptr ? owner->is_done() : view_of(self).is_done());
  });
}

PyObject* method_wait(PyObject* self, PyObject* other) {
  const shared_stream* owner = owner_of(self);
  const stream_view consumer = view_of(self);
  if (is_event(other)) {
    // streamlike::wait(stream, event): a capturing stream waits only on an event recorded in its
    // capture, and refuses any other by name before CUDA would invalidate the capture.
    const streamlike::event* e = event_argument("wait", other);
    if (e == nullptr) return nullptr;
    return guarded([&]() -> PyObject* {
      streamlike::wait(consumer, *e);
      Py_RETURN_NONE;
    });
  }
  stream_view producer = stream_view::legacy_default();
  const char* source = nullptr;
  if (!read_stream(other, producer, source)) return nullptr;
  return guarded([&]() -> PyObject* {
    if (owner != nullptr) {
      owner->wait(producer);
    } else {
      consumer.wait(producer);
    }
    Py_RETURN_NONE;
  });
}

PyObject* method_wait_external(PyObject* self, PyObject* other) {
  const streamlike::event* e = event_argument("wait_external", other);
  if (e == nullptr) return nullptr;
  const stream_view consumer = view_of(self);
  return guarded([&]() -> PyObject* {
    streamlike::wait_external(consumer, *e);
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
  const streamlike::event_options options{.timing = timing == Py_True};
  return guarded([&] {
    const shared_stream* owner = owner_of(self);
    streamlike::event e = owner != nullptr ? owner->record(options) : view_of(self).record(options);
    return nb::cast(std::move(e)).release().ptr();
  });
}

PyObject* method_cuda_stream(PyObject* self, PyObject*) { return sd::cuda_stream_tuple(view_of(self).get()); }

} // namespace

PyObject* refuse_pickle(PyObject* self, PyObject*) {
  PyErr_Format(PyExc_TypeError,
               "cannot pickle '%s' object: a CUDA stream cannot leave its process (its handle means nothing in "
               "another one); pass the object itself to code in this process",
               Py_TYPE(self)->tp_name);
  return nullptr;
}

void refuse_pickle_of(const char* type) {
  PyErr_Format(PyExc_TypeError,
               "cannot pickle '%s' object: CUDA streams, events and graphs cannot leave their process (their "
               "handles mean nothing in another one); pass the object itself to code in this process",
               type);
  throw nb::python_error();
}

PyMethodDef common_methods[] = {
    {"__cuda_stream__", &method_cuda_stream, METH_NOARGS,
     "__cuda_stream__() -> tuple[int, int]\n\nThe CUDA Stream Protocol: (0, the cudaStream_t address)."},
    {"sync", &method_sync, METH_NOARGS,
     "Blocks until all work queued so far has completed (the GIL is released meanwhile). Refused while the "
     "stream captures a CUDA graph."},
    {"is_done", &method_is_done, METH_NOARGS,
     "True once all work queued so far has completed. Refused while the stream captures a CUDA graph."},
    {"wait", &method_wait, METH_O,
     "wait(other): work queued from now on waits for `other`, a stream object (its work queued so far) or an Event. "
     "While this stream captures a CUDA graph, an Event must have been recorded in the same capture; one recorded "
     "outside it is refused by name (wait_external is the explicit choice)."},
    {"wait_external", &method_wait_external, METH_O,
     "wait_external(event): work queued from now on waits for `event`; in a capture, an external event-wait node "
     "that waits, at each launch of the graph, for whatever `event` was last recorded on by then."},
    {"record", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&method_record)),
     METH_VARARGS | METH_KEYWORDS, "A new Event holding the work queued so far (timing=True for elapsed_ms)."},
    {"__reduce__", &refuse_pickle, METH_NOARGS, "Refused: a CUDA stream cannot leave its process."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef common_getset[] = {
    {"handle", &get_handle, nullptr, "The cudaStream_t address, as an int.", nullptr},
    {"exporter", &get_exporter, nullptr, "The object this was made from (kept alive); None if made here.", nullptr},
    {"source", &get_source, nullptr,
     "How the stream was read: 'streamlike', 'torch', 'protocol' (__cuda_stream__), 'created', 'owned-capsule', "
     "or a decoder's name.",
     nullptr},
    {"device", &get_device, nullptr, "The device the stream belongs to (capture-safe).", nullptr},
    {"id", &get_id, nullptr,
     "The process-unique stream id; read once and kept (refused while capturing unless read before).", nullptr},
    {"priority", &get_priority, nullptr, "The stream's priority (lower numbers are higher priorities).", nullptr},
    {"flags", &get_flags, nullptr,
     "cudaStreamDefault (0) or cudaStreamNonBlocking (1); read once and kept (refused while capturing unless "
     "read before).",
     nullptr},
    {"is_default", &get_is_default, nullptr, "True for the handles 0, cudaStreamLegacy and cudaStreamPerThread.",
     nullptr},
    {"is_capturing", &get_is_capturing, nullptr,
     "True while the stream is in a CUDA graph capture, active or invalidated.", nullptr},
    {"capture_info", &get_capture_info, nullptr,
     "The stream's capture state: a CaptureInfo (status 'none', 'active' or 'invalidated'; the capture's id).",
     nullptr},
    {"partition", &get_partition, nullptr,
     "The stream's SM partition: a PartitionInfo for a stream of a green context, None for a plain one "
     "(capture-safe).",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyObject* common_repr(PyObject* self) {
  const bool stream = is_stream(self);
  const shared_stream* owner = owner_of(self);
  PyObject* exporter = exporter_of(self);
  const char* exporter_type = exporter == Py_None ? "None" : Py_TYPE(exporter)->tp_name;
  const stream_view view = view_of(self);
  // The device only where it is known already: a repr makes no CUDA call (the handle may be one
  // a test made up, and the call could fail or block).
  const shared_stream* known = owner;
  if (known == nullptr) {
    known = (stream ? as_stream(self)->facts : as_view(self)->facts).peek();
  }
  const streamlike::detail::stream_facts* facts =
      known != nullptr && *known ? streamlike::detail::shared_stream_access::block(*known).known_facts() : nullptr;
  char device[32] = "";
  if (view.is_default()) {
    std::snprintf(device, sizeof device, " device=current");
  } else if (facts != nullptr) {
    std::snprintf(device, sizeof device, " device=%d", facts->device);
  }
  const char* ownership = owner != nullptr ? " owning" : " non-owning";
  // The handle in hex, never %p (glibc writes a null pointer as "(nil)"), and canonical: a Stream
  // made by C++ may hold the handle 0.
  char handle[2 + 2 * sizeof(std::uintptr_t) + 1];
  std::snprintf(handle, sizeof handle, "0x%" PRIxPTR, reinterpret_cast<std::uintptr_t>(canonical(view).get()));
  return PyUnicode_FromFormat("<streamlike.%s handle=%s%s%s source=%s exporter=%s>", stream ? "Stream" : "StreamView",
                              handle, device, ownership, source_of(self), exporter_type);
}

Py_hash_t common_hash(PyObject* self) {
  const auto h = static_cast<Py_hash_t>(reinterpret_cast<std::uintptr_t>(canonical(view_of(self)).get()));
  return h == -1 ? -2 : h;
}

// Equal when they name the same stream (a Stream and a StreamView of one stream are equal; the
// handles 0 and cudaStreamLegacy are one stream).
PyObject* common_richcompare(PyObject* self, PyObject* other, int op) {
  if ((op != Py_EQ && op != Py_NE) || !(is_stream(other) || is_view(other))) Py_RETURN_NOTIMPLEMENTED;
  const bool same = canonical(view_of(self)) == canonical(view_of(other));
  return py_bool(same == (op == Py_EQ));
}

} // namespace streamlike_package
