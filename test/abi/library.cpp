// One of the two shared libraries of the cross-library test (cross_library.cpp): each is built
// from its own copy of streamlike's sources with every symbol hidden (STREAMLIKE_STATIC: nothing
// is exported), one of them with the old libstdc++ string ABI, so the only thing the two share is
// the C struct of <streamlike/c/owned_stream.h>. ABI_LIBRARY_PREFIX names this copy's functions.
#include <streamlike/c/owned_stream.h>
#include <streamlike/error.hpp>
#include <streamlike/owned_stream.hpp>
#include <streamlike/shared_stream.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#define ABI_EXPORT extern "C" __attribute__((visibility("default")))
#define ABI_CONCAT2(a, b) a##b
#define ABI_CONCAT(a, b) ABI_CONCAT2(a, b)
#define ABI_NAME(name) ABI_CONCAT(ABI_LIBRARY_PREFIX, name)

namespace {

std::mutex held_mutex;
streamlike::shared_stream held;    // what this library holds
streamlike::shared_stream created; // the stream this library made, until told to drop it
std::string last_error;            // what the last refusal said

template <class F>
int guarded(F&& f) noexcept {
  try {
    f();
    return 0;
  } catch (const streamlike::error& e) {
    last_error = e.what();
    return 1;
  } catch (const std::exception& e) {
    last_error = std::string("not a streamlike::error: ") + e.what();
    return 2;
  }
}

} // namespace

/// Adopts fake handle `address` (its own stream now) and returns a new owning reference to it.
ABI_EXPORT streamlike_owned_stream* ABI_NAME(create)(std::uintptr_t address) {
  streamlike_owned_stream* out = nullptr;
  if (guarded([&] {
        created = streamlike::shared_stream::adopt(reinterpret_cast<cudaStream_t>(address)); // NOLINT
        out = streamlike::to_owned_stream(created);
      }) != 0) {
    std::fprintf(stderr, "create failed: %s\n", last_error.c_str());
  }
  return out;
}

/// Drops this library's own reference to the stream it created.
ABI_EXPORT void ABI_NAME(drop_created)() { created.reset(); }

/// Takes over `owned` (0 on success; 1 if refused, with the message in last_error()).
ABI_EXPORT int ABI_NAME(hold)(streamlike_owned_stream* owned) {
  return guarded([&] {
    streamlike::shared_stream s = streamlike::from_owned_stream(owned);
    const std::lock_guard lock(held_mutex);
    held = std::move(s);
  });
}

/// A new owning reference to what this library holds.
ABI_EXPORT streamlike_owned_stream* ABI_NAME(export_held)() {
  const std::lock_guard lock(held_mutex);
  return streamlike::to_owned_stream(held);
}

ABI_EXPORT long ABI_NAME(held_use_count)() {
  const std::lock_guard lock(held_mutex);
  return held.use_count();
}

ABI_EXPORT int ABI_NAME(held_device)() {
  const std::lock_guard lock(held_mutex);
  return held.device(); // cached: no CUDA call
}

ABI_EXPORT void ABI_NAME(release_held)() {
  const std::lock_guard lock(held_mutex);
  held.reset();
}

/// Drops what this library holds on a new thread, and waits for it.
ABI_EXPORT void ABI_NAME(release_held_on_thread)() {
  streamlike::shared_stream moved;
  {
    const std::lock_guard lock(held_mutex);
    moved = std::move(held);
  }
  std::thread([s = std::move(moved)]() mutable { s.reset(); }).join();
}

ABI_EXPORT const char* ABI_NAME(last_error)() { return last_error.c_str(); }
