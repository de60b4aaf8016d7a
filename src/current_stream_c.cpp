// The current stream's C entries (streamlike/c/current_stream_provider.h): streamlike_current_stream_get,
// _set, _restore, _register, _unregister and the sized table of them, each a thin call into the
// C++ core that turns its exceptions into the C status codes.
#include "current_stream_registry.hpp"
#include "current_stream_scope.hpp"

#include <streamlike/c/current_stream_provider.h>
#include <streamlike/c/current_stream_registry.h>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_check.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/stream_view.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <utility>

extern "C" {

STREAMLIKE_API int streamlike_current_stream_register(const streamlike_current_stream_provider* provider) {
  if (provider == nullptr) return STREAMLIKE_CURRENT_STREAM_BAD_PROVIDER;
  try {
    std::string refusal;
    switch (streamlike::detail::current::register_provider(*provider, refusal)) {
      case streamlike::detail::current::registration::registered: return STREAMLIKE_CURRENT_STREAM_REGISTERED;
      case streamlike::detail::current::registration::name_taken: return STREAMLIKE_CURRENT_STREAM_NAME_TAKEN;
      case streamlike::detail::current::registration::bad_provider: break;
    }
    return STREAMLIKE_CURRENT_STREAM_BAD_PROVIDER;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_BAD_PROVIDER;
  }
}

STREAMLIKE_API int streamlike_current_stream_get(int32_t device, void** stream) {
  if (stream == nullptr) return STREAMLIKE_CURRENT_STREAM_FAILED;
  try {
    *stream = streamlike::current_stream(device).get();
    return STREAMLIKE_CURRENT_STREAM_OK;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_FAILED;
  }
}

STREAMLIKE_API int streamlike_current_stream_set(int32_t device, void* stream, void** token) {
  if (token == nullptr) return STREAMLIKE_CURRENT_STREAM_FAILED;
  try {
    const streamlike::stream_view view{static_cast<cudaStream_t>(stream)};
    *token =
        device < 0 ? new streamlike::scoped_current_stream(view) : new streamlike::scoped_current_stream(view, device);
    return STREAMLIKE_CURRENT_STREAM_OK;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_FAILED;
  }
}

STREAMLIKE_API int streamlike_current_stream_restore(void* token) {
  if (token == nullptr) return STREAMLIKE_CURRENT_STREAM_FAILED;
  namespace current = streamlike::detail::current;
  current::scope_ended_elsewhere = false;
  delete static_cast<streamlike::scoped_current_stream*>(token); // the scope's end (never throws)
  // Begun on another thread: left open there, said on stderr (src/scoped_current_stream.cpp).
  return std::exchange(current::scope_ended_elsewhere, false) ? STREAMLIKE_CURRENT_STREAM_FAILED
                                                              : STREAMLIKE_CURRENT_STREAM_OK;
}

STREAMLIKE_API int streamlike_current_stream_unregister(const char* name) {
  if (name == nullptr) return STREAMLIKE_CURRENT_STREAM_NOT_FOUND;
  try {
    return streamlike::unregister_current_stream_provider(name) ? STREAMLIKE_CURRENT_STREAM_REGISTERED
                                                                : STREAMLIKE_CURRENT_STREAM_NOT_FOUND;
  } catch (...) {
    return STREAMLIKE_CURRENT_STREAM_NOT_FOUND;
  }
}

static int check_enabled_for_c(void) { return streamlike::current_stream_check_enabled() ? 1 : 0; }

STREAMLIKE_API const streamlike_current_stream_api* streamlike_current_stream_api_table(void) {
  static const streamlike_current_stream_api table = {STREAMLIKE_CURRENT_STREAM_API_MAJOR_VERSION,
                                                      STREAMLIKE_CURRENT_STREAM_API_MINOR_VERSION,
                                                      &streamlike_current_stream_get,
                                                      &streamlike_current_stream_set,
                                                      &streamlike_current_stream_restore,
                                                      &streamlike_current_stream_register,
                                                      &streamlike_current_stream_unregister,
                                                      &check_enabled_for_c,
                                                      streamlike_current_stream_registry_table()};
  return &table;
}

} // extern "C"
