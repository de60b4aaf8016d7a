// The C++ side of the current-stream tests from Python: functions over streamlike::current_stream()
// of this module's own copy of libstreamlike and over the stream_or_current parameter, bound by
// both test modules (current_stream_nb_module.cpp, current_stream_pb_module.cpp) under the same names.
#ifndef STREAMLIKE_TEST_PYTHON_CURRENT_STREAM_FUNCTIONS_HPP
#define STREAMLIKE_TEST_PYTHON_CURRENT_STREAM_FUNCTIONS_HPP

#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_check.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/error.hpp>
#include <streamlike/python/stream_or_current.hpp>
#include <streamlike/stream_view.hpp>

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace current_test {

using streamlike::stream_view;
using streamlike::python::stream_or_current;

inline std::uintptr_t address_of(stream_view s) noexcept { return reinterpret_cast<std::uintptr_t>(s.get()); }

/// streamlike::current_stream(device) of this module, as an address (-1: the current device).
inline std::uintptr_t current_address(int device) { return address_of(streamlike::current_stream(device)); }

/// The providers this module's copy asks, in order.
inline std::vector<std::string> providers() {
  std::vector<std::string> names;
  for (const auto& p : streamlike::current_stream_providers()) names.push_back(p.name);
  return names;
}

/// [(provider, address)] when they disagree (current_stream_conflicts).
inline std::vector<std::pair<std::string, std::uintptr_t>> conflicts(int device) {
  std::vector<std::pair<std::string, std::uintptr_t>> out;
  for (const auto& a : streamlike::current_stream_conflicts(device)) out.emplace_back(a.provider, address_of(a.stream));
  return out;
}

/// Another framework joining the package's registry from C, through its capsule's table: a
/// provider answering a thread-local handle (`module_framework_stream`, 0 until set).
inline thread_local void* module_framework_stream = nullptr;

inline int module_framework_get(void*, int32_t, void** stream) {
  *stream = module_framework_stream;
  return STREAMLIKE_CURRENT_STREAM_OK;
}

/// The package's table (streamlike/c/current_stream_provider.h), or nullptr where the package is
/// not loaded. GIL held (from Python).
inline const streamlike_current_stream_api* package_table() {
  return streamlike::python::detail::package_current_stream();
}

/// (major, minor) version of the package's table; (0, 0) without the package.
inline std::pair<unsigned, unsigned> package_table_version() {
  const auto* api = package_table();
  return api != nullptr ? std::pair<unsigned, unsigned>{api->major_version, api->minor_version}
                        : std::pair<unsigned, unsigned>{};
}

/// Registers (true) or unregisters (false) the module's framework in the package, answering
/// `address` on this thread, its table declaring `major` and `minor`; the table's result code.
inline int join_package_as(bool join, std::uintptr_t address, unsigned major, unsigned minor) {
  const auto* api = package_table();
  if (api == nullptr) return -1;
  module_framework_stream = reinterpret_cast<void*>(address); // NOLINT(performance-no-int-to-ptr)
  if (!join) return api->unregister_provider("module-framework");
  streamlike_current_stream_provider table = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
  table.major_version = major;
  table.minor_version = minor;
  table.priority = 150;
  table.name = "module-framework";
  table.get = &module_framework_get;
  return api->register_provider(&table);
}

/// join_package_as with this streamlike's provider version.
inline int join_package(bool join, std::uintptr_t address) {
  return join_package_as(join, address, STREAMLIKE_CURRENT_STREAM_PROVIDER_MAJOR_VERSION,
                         STREAMLIKE_CURRENT_STREAM_PROVIDER_MINOR_VERSION);
}

/// (major, minor) provider version this module was built with.
inline std::pair<unsigned, unsigned> provider_version() {
  return {STREAMLIKE_CURRENT_STREAM_PROVIDER_MAJOR_VERSION, STREAMLIKE_CURRENT_STREAM_PROVIDER_MINOR_VERSION};
}

/// Through the package's table: sets `address` current on `device`, reads the package's current
/// stream, restores, reads again: (status of set, inside, after).
inline std::tuple<int, std::uintptr_t, std::uintptr_t> set_in_package(int device, std::uintptr_t address) {
  const auto* api = package_table();
  if (api == nullptr) return {-1, 0, 0};
  void* token = nullptr;
  const int status = api->set(device, reinterpret_cast<void*>(address), &token); // NOLINT(performance-no-int-to-ptr)
  void* inside = nullptr;
  (void)api->get(device, &inside);
  if (status == STREAMLIKE_CURRENT_STREAM_OK) (void)api->restore(token);
  void* after = nullptr;
  (void)api->get(device, &after);
  return {status, reinterpret_cast<std::uintptr_t>(inside), reinterpret_cast<std::uintptr_t>(after)};
}

/// Whether this thread (holding the GIL) and a new C++ thread (no thread state) may call Python
/// now, as the providers that run Python ask it.
inline std::pair<bool, bool> can_call_python_here_and_elsewhere() {
  const bool here = streamlike::python::detail::thread_can_call_python();
  bool elsewhere = true;
  std::thread([&] { elsewhere = streamlike::python::detail::thread_can_call_python(); }).join();
  return {here, elsewhere};
}

/// What a plain stream_view parameter received, as an address.
inline std::uintptr_t view_arg(stream_view s) { return address_of(s); }

/// What a stream_or_current parameter received: (address, whether it was the current stream).
inline std::pair<std::uintptr_t, bool> stream_arg(stream_or_current s) { return {address_of(s.view), s.was_current}; }

/// A library function that launches on the caller's current stream without being told it: writes
/// `value` into `nbytes` bytes at `address` with cudaMemsetAsync on streamlike::current_stream().
inline std::uintptr_t memset_on_current(std::uintptr_t address, std::size_t nbytes, int value) {
  const stream_view s = streamlike::current_stream();
  streamlike::detail::throw_if_error(
      cudaMemsetAsync(reinterpret_cast<void*>(address), value, nbytes, s.get()), // NOLINT(performance-no-int-to-ptr)
      "memset_on_current: cudaMemsetAsync");
  return address_of(s);
}

/// The same on a stream argument that defaults to the current stream (stream_or_current).
inline std::uintptr_t memset_on(std::uintptr_t address, std::size_t nbytes, int value, stream_or_current s) {
  streamlike::detail::throw_if_error(cudaMemsetAsync(reinterpret_cast<void*>(address), value, nbytes,
                                                     s.view.get()), // NOLINT(performance-no-int-to-ptr)
                                     "memset_on: cudaMemsetAsync");
  return address_of(s.view);
}

/// True while current_stream() is capturing (a capture-safe query of the capture status).
inline bool current_is_capturing() { return streamlike::current_stream().is_capturing(); }

/// Makes `stream` current with scoped_current_stream in C++, runs nothing, and reports what
/// current_stream() said inside: the C++ scope seen from C++.
inline std::uintptr_t current_inside_scope(stream_or_current s) {
  const streamlike::scoped_current_stream scope{s.view};
  return address_of(streamlike::current_stream(scope.device()));
}

/// Makes `stream` current on `device` with scoped_current_stream in C++ and calls `inside()`
/// (Python: what the frameworks see there) within the scope; returns its result. What inside()
/// raises leaves the scope as a C++ exception does.
template <class Object>
Object call_inside_scope(stream_or_current s, const Object& inside, int device) {
  const streamlike::scoped_current_stream scope{s.view, device};
  return inside();
}

inline void set_check(bool on) { streamlike::set_current_stream_check(on); }

// For bench/python/bench_current_stream.py: C++ loops timed in C++, so that a Python call's own
// cost is not in the numbers.

/// Where the timed loop leaves its result, so that the compiler keeps the calls.
inline volatile std::uintptr_t bench_sink = 0;

/// Nanoseconds per streamlike::current_stream() (the current device's), over `n` calls.
inline double time_current_stream(int n) {
  std::uintptr_t sink = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) sink += address_of(streamlike::current_stream());
  const auto stop = std::chrono::steady_clock::now();
  bench_sink = sink;
  return std::chrono::duration<double, std::nano>(stop - start).count() / n;
}

/// Nanoseconds per scoped_current_stream entered and left (on the stream's device, given), over
/// `n` scopes.
inline double time_scope(stream_or_current s, int device, int n) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    const streamlike::scoped_current_stream scope{s.view, device};
  }
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(stop - start).count() / n;
}

template <class Module>
void bind_common(Module& m) {
  m.def("current_address", &current_address);
  m.def("providers", &providers);
  m.def("conflicts", &conflicts);
  m.def("memset_on_current", &memset_on_current);
  m.def("current_is_capturing", &current_is_capturing);
  m.def("set_check", &set_check);
  m.def("time_current_stream", &time_current_stream);
  m.def("time_scope", &time_scope);
  m.def("link_package", &streamlike::python::link_package_current_stream);
  m.def("package_table_version", &package_table_version);
  m.def("view_arg", &view_arg);
  m.def("check_active", &streamlike::python::detail::check_active);
  m.def("can_call_python_here_and_elsewhere", &can_call_python_here_and_elsewhere);
  m.def("join_package", &join_package);
  m.def("join_package_as", &join_package_as);
  m.def("provider_version", &provider_version);
  m.def("set_in_package", &set_in_package);
}

} // namespace current_test

#endif // STREAMLIKE_TEST_PYTHON_CURRENT_STREAM_FUNCTIONS_HPP
