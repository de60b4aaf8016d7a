// The C++ side of the owning-exchange tests (test_owned_stream.py, gpu_owned_stream.py,
// bench/python/bench_owned_stream.py), bound once with nanobind and once with pybind11
// (owned_stream_nb_module.cpp, owned_stream_pb_module.cpp). Fake streams are
// streamlike_owned_streams of fake handles whose deleters count releases: no GPU needed, and a
// leak or a double release shows in the counts.
#ifndef STREAMLIKE_TEST_PYTHON_OWNED_STREAM_FUNCTIONS_HPP
#define STREAMLIKE_TEST_PYTHON_OWNED_STREAM_FUNCTIONS_HPP

#include <streamlike/c/owned_stream.h>
#include <streamlike/c/owned_stream_python.h>
#include <streamlike/owned_stream.hpp>
#include <streamlike/python/detail/decode_stream.hpp>
#include <streamlike/shared_stream.hpp>

#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace owned_test {

inline std::atomic<long> fakes_made{0};
inline std::atomic<long> fakes_released{0};
inline std::atomic<bool> report_releases{false};

struct fake_reference {
  streamlike_owned_stream abi{};
};

inline void release_fake(streamlike_owned_stream* self) {
  fakes_released.fetch_add(1);
  if (report_releases.load()) { // also at process exit, after the interpreter is gone
    std::fprintf(stderr, "fake stream %p released\n", self->handle);
    std::fflush(stderr);
  }
  delete static_cast<fake_reference*>(self->manager_ctx);
}

/// A new counted struct for fake handle `address` (its facts filled in), version `major`.0.
inline streamlike_owned_stream* make_fake(std::uintptr_t address,
                                          unsigned major = STREAMLIKE_OWNED_STREAM_MAJOR_VERSION) {
  auto* reference = new fake_reference;
  streamlike_owned_stream& abi = reference->abi;
  abi.major_version = major;
  abi.minor_version = 0;
  abi.manager_ctx = reference;
  abi.deleter = &release_fake;
  abi.handle = reinterpret_cast<void*>(address); // NOLINT(performance-no-int-to-ptr)
  abi.flags = STREAMLIKE_OWNED_STREAM_HAS_FACTS;
  abi.device = 0;
  abi.stream_id = address;
  fakes_made.fetch_add(1);
  return &abi;
}

/// A shared_stream of a fake handle (as if this module had created the stream).
inline streamlike::shared_stream make_fake_stream(std::uintptr_t address) {
  return streamlike::from_owned_stream(make_fake(address));
}

inline long made() { return fakes_made.load(); }
inline long released() { return fakes_released.load(); }
inline void set_report_releases(bool on) { report_releases.store(on); }

// A capsule of another name: its destructor releases the struct unless it was renamed used.
inline void release_any_capsule(PyObject* capsule) {
  const char* name = PyCapsule_GetName(capsule);
  if (name != nullptr && std::strcmp(name, STREAMLIKE_OWNED_STREAM_USED_CAPSULE_NAME) == 0) return;
  // Cannot fail for the capsule's own name, so it sets no exception (one may be set already: the
  // consumer's refusal, raised while the capsule is dropped).
  auto* owned = static_cast<streamlike_owned_stream*>(PyCapsule_GetPointer(capsule, name));
  if (owned != nullptr) owned->deleter(owned);
}

/// A new capsule of a fake stream: named `name` (one of a few fixed names, which must outlive
/// the capsule) and holding version `major`.0. A new reference, or nullptr with an exception set.
inline PyObject* make_capsule(std::uintptr_t address, unsigned major, const std::string& name) {
  static const char* const names[] = {STREAMLIKE_OWNED_STREAM_CAPSULE_NAME, "dltensor", "cuda_stream"};
  for (const char* known : names) {
    if (name == known) {
      streamlike_owned_stream* owned = make_fake(address, major);
      if (name == STREAMLIKE_OWNED_STREAM_CAPSULE_NAME && major == STREAMLIKE_OWNED_STREAM_MAJOR_VERSION) {
        return streamlike_owned_stream_to_capsule(owned); // the library's own helper
      }
      if (name == STREAMLIKE_OWNED_STREAM_CAPSULE_NAME) { // the standard destructor calls only the deleter
        return PyCapsule_New(owned, known, &streamlike_owned_stream_capsule_destructor);
      }
      return PyCapsule_New(owned, known, &release_any_capsule);
    }
  }
  PyErr_SetString(PyExc_ValueError, "make_capsule: unknown capsule name for the test");
  return nullptr;
}

// What C++ holds after Python let go.
inline std::mutex held_mutex;
inline streamlike::shared_stream held;

inline void hold(streamlike::shared_stream s) {
  const std::lock_guard lock(held_mutex);
  held = std::move(s);
}
inline std::uintptr_t held_handle() {
  const std::lock_guard lock(held_mutex);
  return reinterpret_cast<std::uintptr_t>(held.get());
}
inline long held_use_count() {
  const std::lock_guard lock(held_mutex);
  return held.use_count();
}
inline void release_held() {
  streamlike::shared_stream dropped;
  {
    const std::lock_guard lock(held_mutex);
    dropped = std::move(held);
  }
}

/// Drops the held stream on a new C++ thread that never touched Python, while the calling thread
/// keeps the GIL: true if the drop finished within `seconds` (it needed no GIL). If not, the GIL is
/// released so that the drop can finish, and false is returned. Call with the GIL held.
inline bool drop_held_on_thread_keeping_gil(double seconds) {
  streamlike::shared_stream dropped;
  {
    const std::lock_guard lock(held_mutex);
    dropped = std::move(held);
  }
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  std::thread dropper([s = std::move(dropped), &done]() mutable {
    s.reset();
    done.set_value();
  });
  const bool without_gil = finished.wait_for(std::chrono::duration<double>(seconds)) == std::future_status::ready;
  if (without_gil) {
    dropper.join();
  } else {
    PyThreadState* state = PyEval_SaveThread();
    dropper.join();
    PyEval_RestoreThread(state);
  }
  return without_gil;
}

// Held until the process exits (destroyed with the module's statics, after the interpreter).
inline streamlike::shared_stream& kept_until_exit() {
  static streamlike::shared_stream kept;
  return kept;
}
inline void hold_until_exit(streamlike::shared_stream s) { kept_until_exit() = std::move(s); }

/// For the benchmark: what a shared_stream parameter costs, dropped at the end of the call.
inline void take_shared(const streamlike::shared_stream&) {}

/// The borrowed path, given any object: __cuda_stream__ plus a reference kept to the object
/// (what a shared_stream parameter does for an object without __cuda_stream_owned__). Returns the
/// handle; raises what the caster would raise.
inline bool take_borrowed(PyObject* obj) {
  namespace sd = streamlike::python::detail;
  streamlike::stream_view view = streamlike::stream_view::legacy_default();
  const sd::stream_read read = sd::read_stream(obj, view);
  if (sd::report(obj, true, read.status) != sd::outcome::ok) return false;
  streamlike::shared_stream s;
  return sd::report(obj, true, sd::hold_object(obj, view, read.route, s).status) == sd::outcome::ok;
}

// The GPU test: a real stream, made here, used by C++ after Python dropped every object.
inline streamlike::shared_stream make_stream() { return streamlike::shared_stream::create(); }

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(status));
}
/// On the held stream: writes `value` to `count` bytes at device address `ptr`.
inline void held_memset(std::uintptr_t ptr, int value, std::size_t count) {
  const std::lock_guard lock(held_mutex);
  check(cudaMemsetAsync(reinterpret_cast<void*>(ptr), value, count, held.get()), "cudaMemsetAsync"); // NOLINT
}
/// On the held stream: copies `count` bytes from device address `ptr` and returns their sum.
inline unsigned long long held_sum_bytes(std::uintptr_t ptr, std::size_t count) {
  const std::lock_guard lock(held_mutex);
  std::string host(count, '\0');
  check(cudaMemcpyAsync(host.data(), reinterpret_cast<const void*>(ptr), count, cudaMemcpyDeviceToHost, // NOLINT
                        held.get()),
        "cudaMemcpyAsync");
  held.sync();
  unsigned long long sum = 0;
  for (unsigned char c : host) sum += c;
  return sum;
}

} // namespace owned_test

#endif // STREAMLIKE_TEST_PYTHON_OWNED_STREAM_FUNCTIONS_HPP
