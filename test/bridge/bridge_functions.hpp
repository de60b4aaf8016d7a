// The C++ side of the Python bridge tests: plain functions over streamlike's types, bound by
// both test modules (nanobind_module.cpp, pybind11_module.cpp) under the same names, so one set
// of Python tests (test_reading.py and its siblings, gpu_interop.py) checks both casters.
#ifndef STREAMLIKE_TEST_PYTHON_BRIDGE_FUNCTIONS_HPP
#define STREAMLIKE_TEST_PYTHON_BRIDGE_FUNCTIONS_HPP

#include <streamlike/python/integer_streams.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_encodings.hpp>
#include <streamlike/stream_view.hpp>

#include "fake_torch_stream.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

namespace bridge_test {

using streamlike::shared_stream;
using streamlike::stream_view;

inline std::uintptr_t address_of(stream_view s) noexcept { return reinterpret_cast<std::uintptr_t>(s.get()); }

// The handle C++ sees.
inline std::uintptr_t handle_of(stream_view s) { return address_of(s); }
inline std::uintptr_t handle_of_shared(const shared_stream& s) { return address_of(s.view()); }
inline std::optional<std::uintptr_t> handle_of_optional(std::optional<stream_view> s) {
  return s ? std::optional<std::uintptr_t>(address_of(*s)) : std::nullopt;
}
inline std::optional<std::uintptr_t> handle_of_optional_shared(std::optional<shared_stream> s) {
  return s ? std::optional<std::uintptr_t>(address_of(s->view())) : std::nullopt;
}
// Streams nested in a container: the binding's list caster calls the stream caster.
inline std::vector<std::uintptr_t> handles_of(const std::vector<stream_view>& streams) {
  std::vector<std::uintptr_t> out;
  for (stream_view s : streams) out.push_back(address_of(s));
  return out;
}
inline std::optional<std::uintptr_t> dlpack_handle(streamlike::python::dlpack_stream s) {
  return s.view ? std::optional<std::uintptr_t>(address_of(*s.view)) : std::nullopt;
}
inline std::optional<std::uintptr_t> cai_handle(streamlike::python::cai_stream s) {
  return s.view ? std::optional<std::uintptr_t>(address_of(*s.view)) : std::nullopt;
}

// How many shared_streams share the argument's stream while the function runs (by value: the
// caster's shared_stream is moved into the parameter, so a fresh exporter gives 1).
inline long use_count_of(shared_stream s) { return s.use_count(); }

// shared_streams kept by C++ after the call returns: what keeps a Python exporter alive.
inline std::vector<shared_stream>& held() {
  static std::vector<shared_stream> streams;
  return streams;
}
inline void hold(shared_stream s) { held().push_back(std::move(s)); }
inline std::size_t held_count() { return held().size(); }
inline std::size_t release_held() {
  const std::size_t n = held().size();
  held().clear();
  return n;
}
inline long held_use_count(std::size_t i) { return held().at(i).use_count(); }
inline void sync_held(std::size_t i) { held().at(i).view().sync(); }
// Drops the held shared_streams on a thread Python does not know. Bound with the GIL released
// (the thread's py_ref destructors take it); returns how many were dropped.
inline std::size_t release_held_on_other_thread() {
  std::vector<shared_stream> streams = std::move(held());
  held().clear();
  const std::size_t n = streams.size();
  std::thread([dropped = std::move(streams)]() mutable { dropped.clear(); }).join();
  return n;
}

// Kept until the process ends: destroyed by the C++ runtime after Python has finalized, which is
// what the finalization test checks (the reference must be skipped, not decref'd).
inline void hold_until_exit(shared_stream s) {
  static std::vector<shared_stream>* forever = new std::vector<shared_stream>(); // never destroyed
  static std::vector<shared_stream> until_static_destruction;                    // destroyed at exit
  forever->push_back(s);
  until_static_destruction.push_back(std::move(s));
}

// shared_streams given back to Python.
inline shared_stream pass_through(shared_stream s) { return s; }
inline shared_stream legacy_default_stream() { return shared_stream::legacy_default(); }
inline shared_stream per_thread_default_stream() { return shared_stream::per_thread_default(); }
inline shared_stream empty_shared_stream() { return shared_stream{}; }
inline std::optional<shared_stream> maybe_shared(bool give) {
  return give ? std::optional<shared_stream>(shared_stream::legacy_default()) : std::nullopt;
}
// A view given back to Python: a non-owning streamlike.Stream.
inline stream_view view_of_address(std::uintptr_t address) { return streamlike::from_address(address); }

// Overloads: the int overload must win for an int, the stream overload for a stream.
inline int overloaded_stream(stream_view) { return 1; }
inline int overloaded_int(long long) { return 2; }

// GPU helpers (the GPU tests only).
inline int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}
inline shared_stream create_stream() { return shared_stream::create(); }
inline void sync(stream_view s) { s.sync(); }
inline bool is_done(stream_view s) { return s.is_done(); }
inline void wait(stream_view consumer, stream_view producer) { consumer.wait(producer); }
// A C++ operation enqueued on a stream given from Python: fills `bytes` bytes at `device_pointer`.
inline void memset_async(std::uintptr_t device_pointer, int value, std::size_t bytes, stream_view s) {
  streamlike::detail::throw_if_error(cudaMemsetAsync(reinterpret_cast<void*>(device_pointer), value, bytes, s.get()),
                                     "memset_async: cudaMemsetAsync");
}
inline int stream_device(const shared_stream& s) { return s.device(); }

// The benchmark's bodies: nothing but the argument conversion.
inline void noop_view(stream_view) {}
inline void noop_shared(shared_stream) {}
inline void noop_int(std::uintptr_t) {}

/// Binds every function above into `m`; nanobind's and pybind11's module objects spell def() alike.
template <class Module>
void bind_all(Module& m) {
  m.def("handle_of", &handle_of);
  m.def("handle_of_shared", &handle_of_shared);
  m.def("handle_of_optional", &handle_of_optional);
  m.def("handle_of_optional_shared", &handle_of_optional_shared);
  m.def("handles_of", &handles_of);
  m.def("dlpack_handle", &dlpack_handle);
  m.def("cai_handle", &cai_handle);
  m.def("use_count_of", &use_count_of);
  m.def("hold", &hold);
  m.def("held_count", &held_count);
  m.def("release_held", &release_held);
  m.def("held_use_count", &held_use_count);
  m.def("sync_held", &sync_held);
  m.def("hold_until_exit", &hold_until_exit);
  m.def("pass_through", &pass_through);
  m.def("legacy_default_stream", &legacy_default_stream);
  m.def("per_thread_default_stream", &per_thread_default_stream);
  m.def("empty_shared_stream", &empty_shared_stream);
  m.def("maybe_shared", &maybe_shared);
  m.def("view_of_address", &view_of_address);
  // Stream overload first: it must still lose to the exact int overload for an int.
  m.def("overloaded", &overloaded_stream);
  m.def("overloaded", &overloaded_int);
  m.def("cuda_device_count", &cuda_device_count);
  m.def("create_stream", &create_stream);
  m.def("sync", &sync);
  m.def("is_done", &is_done);
  m.def("wait", &wait);
  m.def("memset_async", &memset_async);
  m.def("stream_device", &stream_device);
  m.def("noop_view", &noop_view);
  m.def("noop_shared", &noop_shared);
  m.def("noop_int", &noop_int);
  m.def("fake_torch_reads", &fake_torch_reads); // fake_torch_stream.hpp
}

} // namespace bridge_test

#endif // STREAMLIKE_TEST_PYTHON_BRIDGE_FUNCTIONS_HPP
