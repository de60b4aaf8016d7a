// One copy of streamlike inside a library loaded RTLD_LOCAL, as an extension module holds one:
// built three times (test/host/meson.build), linked to libstreamlike.so or holding its own static
// copy, and driven by test/host/current_stream_shared.cpp through these C functions, which each
// library exports under the same names (dlsym on the library's own handle tells them apart).
#include <streamlike/c/current_stream_registry.h>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#define COPY_API extern "C" __attribute__((visibility("default")))

namespace {
thread_local std::string last_error;

template <class F>
int reporting(F&& f) {
  try {
    f();
    last_error.clear();
    return 0;
  } catch (const std::invalid_argument& e) {
    last_error = e.what();
    return 1;
  } catch (const std::exception& e) {
    last_error = e.what();
    return 2;
  }
}
} // namespace

COPY_API const void* copy_registry() { return streamlike_current_stream_registry_table(); }

COPY_API const char* copy_last_error() { return last_error.c_str(); }

COPY_API int copy_current(int device, void** stream) {
  return reporting([&] { *stream = streamlike::current_stream(device).get(); });
}

COPY_API int copy_enter(void* stream, int device, void** scope) {
  return reporting([&] {
    const streamlike::stream_view view{static_cast<cudaStream_t>(stream)};
    *scope =
        device < 0 ? new streamlike::scoped_current_stream(view) : new streamlike::scoped_current_stream(view, device);
  });
}

COPY_API void copy_leave(void* scope) { delete static_cast<streamlike::scoped_current_stream*>(scope); }

COPY_API int copy_register(const streamlike_current_stream_provider* provider) {
  return reporting([&] { streamlike::register_current_stream_provider(*provider); });
}

COPY_API int copy_unregister(const char* name, int* removed) {
  return reporting([&] { *removed = streamlike::unregister_current_stream_provider(name) ? 1 : 0; });
}

/// The providers' names in asking order, comma-separated.
COPY_API const char* copy_providers() {
  static thread_local std::string names;
  names.clear();
  (void)reporting([&] {
    for (const auto& p : streamlike::current_stream_providers()) names += (names.empty() ? "" : ",") + p.name;
  });
  return names.c_str();
}

/// current_stream_conflicts(device) as "name=0x...,name=0x...".
COPY_API const char* copy_conflicts(int device) {
  static thread_local std::string text;
  text.clear();
  (void)reporting([&] {
    for (const auto& a : streamlike::current_stream_conflicts(device)) {
      char handle[32];
      std::snprintf(handle, sizeof handle, "%p", static_cast<void*>(a.stream.get()));
      text += (text.empty() ? "" : ",") + a.provider + "=" + handle;
    }
  });
  return text.c_str();
}
