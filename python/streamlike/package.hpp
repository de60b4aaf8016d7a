// The parts of the `streamlike` package's extension module that its files share
// (docs/python-package.md). The module is a face of the library: every operation is one call into
// streamlike (shared_stream, stream_view, event, graph, capture_scope, retain_until_done) or into
// the casters (reading a stream object, translating an exception). No file here calls CUDA.
//
// One file per type, each with one bind_* function that the module file calls:
//   view.cpp      StreamView            stream.cpp   Stream
//   event.cpp     Event                 pool.cpp     StreamPool
//   capture.cpp   capture, Graph, GraphExec, CaptureInfo
//   partition.cpp Partition, PartitionInfo, partition_of (and StreamView.partition's answer)
//   functions.cpp wait, wait_external, from_address, from_dlpack_stream, from_cai_stream, retain_until_done, ...
//   current_stream.cpp  current_stream, the providers, conflicts, the check's switch
//   use.cpp       use                   cupy_provider.cpp  CuPy's current-stream provider
//   torch_stream.cpp  torch's stream object made current by use
//   dlpack_exchange_provider.cpp  a provider over DLPack's C exchange API
//   stream_common.cpp  what StreamView and Stream share (reading, facts, operations, repr)
#ifndef STREAMLIKE_PACKAGE_PACKAGE_HPP
#define STREAMLIKE_PACKAGE_PACKAGE_HPP

#include <nanobind/nanobind.h>

#include <streamlike/python/detail/translate_exceptions.hpp>
#include <streamlike/default_stream.hpp>
#include <streamlike/python/nanobind.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <atomic>
#include <chrono>
#include <exception>
#include <utility>

namespace streamlike_package {

namespace nb = nanobind;
namespace sd = streamlike::python::detail;
using streamlike::shared_stream;
using streamlike::stream_view;

// How a stream was read (the `source` attribute).
inline constexpr const char* source_streamlike = "streamlike"; // a streamlike Stream or StreamView, or C++
inline constexpr const char* source_torch = "torch";           // torch's fast path (no __cuda_stream__ call)
inline constexpr const char* source_protocol = "protocol";     // __cuda_stream__
inline constexpr const char* source_created = "created";       // Stream.create
inline constexpr const char* source_owned = "owned-capsule";   // __cuda_stream_owned__

/// The `source` of a stream read by the casters' reader (read_stream.hpp), by the way it read it.
[[nodiscard]] constexpr const char* source_of(sd::stream_route route) noexcept {
  switch (route) {
    case sd::stream_route::streamlike: return source_streamlike;
    case sd::stream_route::torch: return source_torch;
    case sd::stream_route::protocol: break;
  }
  return source_protocol;
}

/// The facts cache of an object that holds no owning shared_stream (a StreamView, a non-owning
/// Stream): a shared_stream made on first use with shared_stream::keep_alive(view, facts_only{}),
/// so the library's facts cache answers (queried once, thread-safe, capture-safe). It keeps
/// nothing alive (the Python object holds the exporter) and is never handed out.
class facts_cache {
public:
  /// The cache's shared_stream for `view`, made on first use (thread-safe without the GIL).
  [[nodiscard]] const shared_stream& get(stream_view view);
  /// The cache if made already, else nullptr (no allocation, no CUDA call: for repr).
  [[nodiscard]] const shared_stream* peek() const noexcept { return slot_.load(std::memory_order_acquire); }
  /// Frees the cache (tp_dealloc).
  void reset() noexcept {
    // Only from tp_dealloc, where no other thread can reach the object: a plain load, no exchange.
    delete slot_.load(std::memory_order_acquire);
    slot_.store(nullptr, std::memory_order_relaxed);
  }

private:
  std::atomic<shared_stream*> slot_; // zero-filled by tp_alloc: null
};

/// streamlike.Stream. Starts with the casters' stream_object: every module built on the casters
/// fills in `base` (tp_alloc zeroes the rest), streamlike/c/package_api.h.
struct package_stream {
  sd::stream_object base;
  PyObject* exporter;     // the object it was made from (strong); nullptr: None
  const char* source;     // nullptr: made by C++ ("streamlike")
  PyObject* block_object; // strong: the object base.owner's block holds, if this module made the block
  facts_cache facts;      // for a non-owning Stream (made by C++ from a stream_view)
  PyObject* weakrefs;
};

/// streamlike.StreamView: a view, the object that exported it, and (for an object that offers
/// only __cuda_stream_owned__) the owning reference it gave. The package's C API tells every
/// module where `view` is (streamlike/c/package_api.h), so that theirs read it without a Python call.
struct view_object {
  PyObject_HEAD
  stream_view view;
  PyObject* exporter; // strong; nullptr: None (made by a decoder)
  const char* source;
  shared_stream owner;    // only for an object that offers nothing but __cuda_stream_owned__
  PyObject* block_object; // strong: the object owner's block holds, if this module made the block
  facts_cache facts;
  PyObject* weakrefs;
};

extern PyTypeObject* stream_type; // strong references, for the life of the process
extern PyTypeObject* view_type;

[[nodiscard]] inline bool is_stream(PyObject* obj) noexcept { return Py_TYPE(obj) == stream_type; }
[[nodiscard]] inline bool is_view(PyObject* obj) noexcept { return Py_TYPE(obj) == view_type; }
[[nodiscard]] inline package_stream* as_stream(PyObject* obj) noexcept {
  return reinterpret_cast<package_stream*>(obj);
}
[[nodiscard]] inline view_object* as_view(PyObject* obj) noexcept { return reinterpret_cast<view_object*>(obj); }

/// Runs `f()` (which returns a new reference); a C++ exception becomes the Python exception the
/// casters translate it to (streamlike::error: RuntimeError, std::invalid_argument: ValueError).
template <class F>
[[nodiscard]] PyObject* guarded(F&& f) noexcept {
  return sd::translate_exceptions<PyObject*>(nullptr, std::forward<F>(f));
}

/// Runs `f()` with the GIL released (it may block on the GPU); a C++ exception is translated once
/// the GIL is back. Returns None or nullptr.
template <class F>
[[nodiscard]] PyObject* unlocked(F&& f) noexcept {
  std::exception_ptr failed;
  PyThreadState* saved = PyEval_SaveThread();
  try {
    std::forward<F>(f)();
  } catch (...) {
    failed = std::current_exception();
  }
  PyEval_RestoreThread(saved);
  if (!failed) Py_RETURN_NONE;
  try {
    std::rethrow_exception(failed);
  } catch (...) {
    sd::set_error_from_current_exception();
  }
  return nullptr;
}

/// How long sync() polls is_done(), holding the GIL, before it releases the GIL to wait: longer
/// than a sleeping thread takes to wake (tens of microseconds), far shorter than the interpreter's
/// switch interval (sys.getswitchinterval()), after which a waiting thread asks the holder to hand
/// the GIL over.
inline constexpr std::chrono::microseconds gil_held_poll{50};

/// What polling `is_done()` found (finished_within_poll).
enum class poll_result {
  finished,   ///< nothing to wait for: the GIL is kept
  unfinished, ///< still running after gil_held_poll: wait with the GIL released
  threw,      ///< refused (a capture) or failed: the blocking call reports it, holding the GIL
};

/// Asks `is_done()` until it says so or gil_held_poll has passed.
///
/// sync() asks this first, holding the GIL, and releases the GIL only for a wait that has lasted
/// gil_held_poll already. Releasing it around a call that returns at once, or within a few
/// microseconds, starves other Python threads: a thread returning from a GIL-free call finds the
/// GIL free and takes it at once, while a thread that sleeps waiting for the GIL takes longer to
/// wake than the call lasted, finds it taken again and sleeps again with its wait restarted; and
/// it asks the holder to drop the GIL only after a whole switch interval with no hand-over, which
/// threads trading the GIL among themselves never leave (CPython's take_gil).
///
/// Where `is_done()` throws, the blocking call that follows runs with the GIL held, so it reports
/// the problem under its own name and its capture check sees every framework's current stream
/// (CuPy's is read only from a thread that holds the GIL); such a call returns at once.
template <class IsDone>
[[nodiscard]] poll_result finished_within_poll(IsDone&& is_done) noexcept {
  try {
    const auto deadline = std::chrono::steady_clock::now() + gil_held_poll;
    do {
      if (is_done()) return poll_result::finished;
    } while (std::chrono::steady_clock::now() < deadline);
  } catch (...) {
    return poll_result::threw;
  }
  return poll_result::unfinished;
}

/// Reads any stream object with the casters' reader (read_stream.hpp): ours without a Python
/// call, torch's through its fast path, the rest through __cuda_stream__. Sets `source`. On
/// failure the Python exception is set (the protocol's TypeError or ValueError, or what the object
/// itself raised).
[[nodiscard]] bool read_stream(PyObject* obj, stream_view& out, const char*& source) noexcept;
/// read_stream for a binding's argument (Event.record, capture, GraphExec.launch, use): the view,
/// or nb::python_error carrying read_stream's exception. The package's only other reader of a
/// stream argument is read_stream itself.
[[nodiscard]] stream_view stream_argument(nb::handle obj);

/// The view of a StreamView or Stream.
[[nodiscard]] stream_view view_of(PyObject* self) noexcept;
/// The shared_stream whose accessors answer for a StreamView or Stream: its owning reference if
/// it has one, else its facts cache.
[[nodiscard]] const shared_stream& facts_of(PyObject* self);

/// One default stream, one handle: the handle 0 is the legacy default stream here (the package is
/// built in the legacy default-stream mode, and the library reads 0 so), so it is kept, compared,
/// hashed and shown as cudaStreamLegacy, as from_address(0) and `__cuda_stream__` (0, 0) give it.
[[nodiscard]] inline stream_view canonical(stream_view view) noexcept { return streamlike::resolve_default(view); }
static_assert(!streamlike::default_stream_is_per_thread,
              "the package is built in the legacy default-stream mode: canonical() reads the handle 0 so");

/// A new StreamView of `view` (canonical: the handle 0 becomes cudaStreamLegacy) holding
/// `exporter` (may be nullptr).
[[nodiscard]] PyObject* new_view(stream_view view, PyObject* exporter, const char* source) noexcept;
/// A new Stream holding `owner` (may be empty: non-owning), naming `handle`.
[[nodiscard]] PyObject* new_stream(shared_stream owner, cudaStream_t handle, PyObject* exporter,
                                   const char* source) noexcept;

/// Garbage-collector support for a block shared by Python objects (reference_block's
/// *_python_owner): every owning reference is visited once, however many Streams and StreamViews
/// share a block (stream_common.cpp).
/// For an object that has just taken `owner`: if this module made owner's block and it holds a
/// Python object, counts the object as one of the block's Python owners and returns a new
/// reference to the block's object (the object's block_object), else nullptr.
[[nodiscard]] PyObject* share_block_object(const shared_stream& owner) noexcept;
/// tp_traverse's part for `owner` and the block_object it came with.
[[nodiscard]] int visit_block_share(PyObject* self, const shared_stream& owner, PyObject* block_object, visitproc visit,
                                    void* arg) noexcept;
/// tp_clear's part: if `block_object` is set, the object stops being one of the block's owners
/// and both references are dropped, after the fields are cleared (dropping may run Python code).
void clear_block_share(PyObject* self, shared_stream& owner, PyObject*& block_object) noexcept;

/// `value` as an optional device ordinal; false with TypeError/ValueError naming `where` if it is
/// neither None nor an int >= 0.
[[nodiscard]] bool read_device(const char* where, PyObject* value, std::optional<int>& device) noexcept;

/// The TypeError of a Stream(...) call not given exactly one positional argument (view.cpp).
void wrong_stream_arguments(Py_ssize_t nargs, Py_ssize_t nkw) noexcept;

/// __reduce__ of every type: pickling is refused (a CUDA stream, event or graph cannot leave its
/// process).
PyObject* refuse_pickle(PyObject* self, PyObject* unused);
/// The same for nanobind classes (raises TypeError).
[[noreturn]] void refuse_pickle_of(const char* type);

/// The PyMethodDef and PyGetSetDef entries StreamView and Stream share (stream_common.cpp); each
/// array ends with a null entry.
extern PyMethodDef common_methods[];
extern PyGetSetDef common_getset[];
[[nodiscard]] PyObject* common_repr(PyObject* self);
[[nodiscard]] Py_hash_t common_hash(PyObject* self);
[[nodiscard]] PyObject* common_richcompare(PyObject* self, PyObject* other, int op);

/// True if `obj` is a streamlike.Event (event.cpp).
[[nodiscard]] bool is_event(PyObject* obj) noexcept;
/// The event an Event argument holds, or nullptr with a TypeError naming `where`, what was given
/// and that an Event was expected (event.cpp).
[[nodiscard]] const streamlike::event* event_argument(const char* where, PyObject* obj) noexcept;

/// streamlike.CaptureInfo for `state` (capture.cpp).
[[nodiscard]] PyObject* capture_info_object(const streamlike::capture_state& state) noexcept;

/// Registers CuPy's current-stream provider once `cupy` has been imported (never imports it); after
/// that, one atomic load. The calling thread can call Python. Called before every call that reads
/// the current stream, the capture checks of sync, is_done and elapsed_ms included: CuPy's capture
/// (`with s: s.begin_capture()`) is seen only through CuPy's current stream. Registration runs once
/// per process; CuPy is resolved with no lock held (Python runs no lock a GIL holder may wait on)
/// (cupy_provider.cpp). The package's import hook (_cupy_watch.py) calls it once `cupy` is imported.
void register_cupy_if_loaded() noexcept;

/// Registers a current-stream provider over torch.Tensor's DLPack C exchange API once `torch` is
/// imported, where no dedicated torch provider is registered (a torch whose libtorch_cuda lacks the
/// C shim); decided once (dlpack_exchange_provider.cpp). Called where register_cupy_if_loaded is by
/// current_stream, use, the providers and the conflicts.
void register_dlpack_torch_if_needed() noexcept;

/// For a torch.cuda.Stream `stream` (where torch is imported: never imports it), makes torch's very
/// object current with torch's own setter, after a scope made its handle current; best effort
/// (torch_stream.cpp).
void let_torch_see_its_object(PyObject* stream) noexcept;

/// StreamView.partition and Stream.partition: a PartitionInfo for a stream of a green context, None
/// for a plain one (partition.cpp).
[[nodiscard]] PyObject* partition_or_none(stream_view view) noexcept;
/// Stream.create's partition argument: None (out untouched) or a streamlike.Partition; false with
/// a TypeError naming what was given otherwise (partition.cpp).
[[nodiscard]] bool read_partition(PyObject* value, std::optional<streamlike::partition>& out) noexcept;

/// The module's parts, one per file, in the order the module file calls them.
void bind_view(nb::module_& m);
void bind_stream(nb::module_& m);
void bind_event(nb::module_& m);
void bind_pool(nb::module_& m);
void bind_partition(nb::module_& m);
void bind_capture(nb::module_& m);
void bind_functions(nb::module_& m);
void bind_current_stream(nb::module_& m); // calls bind_use
void bind_use(nb::module_& m);
void bind_dlpack_exchange(nb::module_& m);

} // namespace streamlike_package

#endif // STREAMLIKE_PACKAGE_PACKAGE_HPP
