// The registry of current-stream providers (src/current_stream.cpp), shared with the check and
// the built-in providers (src/current_stream_torch.cpp, src/current_stream_tvm_ffi.cpp).
#ifndef STREAMLIKE_SRC_CURRENT_STREAM_REGISTRY_HPP
#define STREAMLIKE_SRC_CURRENT_STREAM_REGISTRY_HPP

#include <streamlike/c/current_stream_provider.h>
#include <streamlike/stream_view.hpp>

#include <string>
#include <vector>

namespace streamlike::detail::current {

struct provider {
  streamlike_current_stream_provider table; // table.name points into `name`
  std::string name;
};

/// An immutable list, sorted in asking order. Lists are never freed: a reader holds no lock and a
/// list it is walking stays valid whatever registers meanwhile (registrations are rare).
struct provider_list {
  std::vector<provider> entries;
};

/// The current list, after looking for built-in frameworks loaded since the last look. Throttled
/// (current_stream(), the check): at most one look per tick of the coarse clock, so a framework
/// loaded a few milliseconds ago may not be seen yet; scopes and listings always look.
[[nodiscard]] const provider_list& providers(bool throttled = false) noexcept;

/// current_stream()'s answer and the provider that gave it (nullptr: none answered).
struct answer {
  void* stream = nullptr;
  const provider* by = nullptr;
};
[[nodiscard]] answer current_answer(const provider_list& list, int device) noexcept;

/// `device`, or the current device for current_device; throws std::invalid_argument (below -1) or
/// streamlike::error (cudaGetDevice failed), naming `operation`.
[[nodiscard]] int resolve_device(int device, const char* operation);

/// True for the handles CUDA gives the default streams: 0, cudaStreamLegacy, cudaStreamPerThread.
[[nodiscard]] inline bool is_default_handle(void* stream) noexcept {
  return stream == nullptr || stream == static_cast<void*>(cudaStreamLegacy) ||
         stream == static_cast<void*>(cudaStreamPerThread);
}

} // namespace streamlike::detail::current

namespace streamlike::detail::providers {
/// Fills `out` with torch's provider when libtorch_cuda is loaded and has the stable C shim's
/// functions (src/current_stream_torch.cpp).
[[nodiscard]] bool find_torch(streamlike_current_stream_provider& out) noexcept;
/// Fills `out` with tvm-ffi's provider when libtvm_ffi is loaded (src/current_stream_tvm_ffi.cpp).
[[nodiscard]] bool find_tvm_ffi(streamlike_current_stream_provider& out) noexcept;
} // namespace streamlike::detail::providers

#endif // STREAMLIKE_SRC_CURRENT_STREAM_REGISTRY_HPP
