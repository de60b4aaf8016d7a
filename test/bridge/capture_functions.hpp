// The C++ side of the Python capture tests (gpu_capture.py): functions a library would bind, called
// inside torch.cuda.graph, CuPy's begin_capture/end_capture and cuda.core's graph builder. Both
// test modules bind them under the same names (bind_capture).
#ifndef STREAMLIKE_TEST_PYTHON_CAPTURE_FUNCTIONS_HPP
#define STREAMLIKE_TEST_PYTHON_CAPTURE_FUNCTIONS_HPP

#include <streamlike/capture.hpp>
#include <streamlike/event.hpp>
#include <streamlike/graph.hpp>
#include <streamlike/python/detail/py_ref.hpp>
#include <streamlike/retain_until_done.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace capture_test {

using streamlike::shared_stream;
using streamlike::stream_view;

// What a library function asks of the stream it is given, each safe under capture: the device
// (through the context), the priority, whether it captures, and an event recorded on it. Returns
// the device; throws if any answer disagrees with the others.
inline int queries_of_view(stream_view s) {
  const int device = s.device();
  (void)s.priority();
  (void)streamlike::record(s);
  return device;
}
// The same through a shared_stream (a keep-alive of the Python exporter: the first query).
inline int queries_of_shared(const shared_stream& s) {
  const int device = s.device();
  (void)s.priority();
  (void)s.record();
  return device;
}
inline bool view_is_capturing(stream_view s) { return s.is_capturing(); }
inline bool shared_is_capturing(const shared_stream& s) { return s.is_capturing(); }
// The refusal, for the test that a refused call leaves the capture intact.
inline unsigned long long view_id(stream_view s) { return s.id(); }

// Keeps a Python object alive until the GPU is done with it (its reference dropped on
// streamlike's release thread, which takes the GIL).
inline void retain_python(stream_view s, PyObject* object) {
  streamlike::retain_until_done(s, streamlike::python::detail::py_ref(object));
}
// Bound with the GIL released: the release thread needs it to drop Python references.
inline void flush_released() { streamlike::detail::flush_released_objects(); }

// A capture scope opened from C++: fills `bytes` bytes at `device_pointer` with `value`, retains
// `object` in the graph, and returns the executable graph.
inline streamlike::graph_exec capture_memset(stream_view s, std::uintptr_t device_pointer, int value, std::size_t bytes,
                                             PyObject* object) {
  streamlike::graph g = streamlike::capture(
      s,
      [&](stream_view capturing) {
        streamlike::detail::throw_if_error(
            cudaMemsetAsync(reinterpret_cast<void*>(device_pointer), value, bytes, capturing.get()),
            "capture_memset: cudaMemsetAsync");
        retain_python(capturing, object);
      },
      streamlike::capture_mode::thread_local_);
  return g.instantiate();
}
inline void launch(const streamlike::graph_exec& exec, stream_view s) { exec.launch(s); }

/// Binds the functions above into `m`; `object_ptr` turns the binding's object type into a PyObject*.
template <class Module, class Object, class GilRelease>
void bind_capture(Module& m, GilRelease gil_release) {
  m.def("queries_of_view", &queries_of_view);
  m.def("queries_of_shared", &queries_of_shared);
  m.def("view_is_capturing", &view_is_capturing);
  m.def("shared_is_capturing", &shared_is_capturing);
  m.def("view_id", &view_id);
  m.def("retain_python", [](stream_view s, Object object) { retain_python(s, object.ptr()); });
  m.def("flush_released", &flush_released, gil_release);
  m.def("capture_memset", [](stream_view s, std::uintptr_t pointer, int value, std::size_t bytes, Object object) {
    return capture_memset(s, pointer, value, bytes, object.ptr());
  });
}

} // namespace capture_test

#endif // STREAMLIKE_TEST_PYTHON_CAPTURE_FUNCTIONS_HPP
