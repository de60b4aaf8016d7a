// No lock of streamlike's is held across the dynamic loader, and no reader waits for a look for
// frameworks in progress: a library whose static initializer asks for the current stream (under
// the loader's lock) while another thread is looking for frameworks (inside the loader's
// dlopen(RTLD_NOLOAD)) finishes loading. Held across the loader, streamlike's lock deadlocks the
// two threads; a watchdog turns that into a failure instead of a hung test.
#include <streamlike/current_stream_providers.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <dlfcn.h>

namespace {
// 0: nobody in the library's initializer yet; 1: it is there, holding the loader's lock; 2: the
// other thread is about to look for frameworks.
std::atomic<int> phase{0};
} // namespace

extern "C" __attribute__((visibility("default"))) void current_stream_loader_in_initializer() {
  phase.store(1);
  while (phase.load() < 2) std::this_thread::yield();
  // Time for the other thread to reach the loader's lock inside its look.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

TEST_CASE("a library's initializer asks for the current stream while another thread looks for frameworks") {
  (void)streamlike::current_stream_providers(); // the first list exists; the next load is news
  std::atomic<bool> loaded{false};
  std::atomic<bool> looked{false};
  std::thread loading([&] {
    void* library = dlopen(LOADER_LIBRARY, RTLD_NOW);
    const auto asked = library != nullptr
                           ? reinterpret_cast<int (*)()>(dlsym(library, "current_stream_loader_library_asked"))
                           : nullptr;
    loaded.store(asked != nullptr && asked() == 1);
  });
  std::thread looking([&] {
    while (phase.load() < 1) std::this_thread::yield();
    phase.store(2);
    (void)streamlike::current_stream_providers(); // a look: the loader counted a new object
    looked.store(true);
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!(loaded.load() && looked.load()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!(loaded.load() && looked.load())) {
    // The threads cannot be joined: report and leave.
    std::fprintf(stderr, "current_stream_loader: deadlock: the library %s, the look %s after 20 s\n",
                 loaded.load() ? "loaded" : "did not load", looked.load() ? "ended" : "did not end");
    std::_Exit(1);
  }
  loading.join();
  looking.join();
  CHECK(loaded.load());
  CHECK(looked.load());
}

TEST_CASE("a framework loaded after a look is found by current_stream(), which watches the loader without its lock") {
  (void)streamlike::current_stream(0); // looks if anything was loaded: watched from here on
  for (const auto& p : streamlike::current_stream_providers()) REQUIRE(p.name != "torch");
  void* torch = dlopen(FAKE_TORCH, RTLD_NOW | RTLD_GLOBAL);
  REQUIRE(torch != nullptr);
  const auto set =
      reinterpret_cast<std::int32_t (*)(void*, std::int32_t)>(dlsym(torch, "torch_set_current_cuda_stream"));
  REQUIRE_MESSAGE(static_cast<bool>(set), "the stand-in for libtorch_cuda.so has no setter");
  void* const stream = reinterpret_cast<void*>(std::uintptr_t{0x5000});
  REQUIRE(set(stream, 0) == 0);
  // current_stream() alone (a listing always looks): it notices the load on its own, within a tick
  // of the coarse clock (a few milliseconds).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (streamlike::current_stream(0).get() != stream && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  CHECK(streamlike::current_stream(0).get() == stream);
  REQUIRE(set(nullptr, 0) == 0);
}
