// streamlike/current_stream_providers.hpp: the registry of current-stream providers, and what
// they disagree on.
//
// A provider reads (and optionally sets) one framework's current stream per host thread and
// device; streamlike/c/current_stream_provider.h is its C interface. streamlike's own thread-local
// is always registered; torch's and tvm-ffi's are found in the already-loaded framework (dlopen
// with RTLD_NOLOAD, then dlsym): whenever libraries were loaded since the last look, the next
// current_stream(), scoped_current_stream or listing looks again for the ones still absent.
#ifndef STREAMLIKE_CURRENT_STREAM_PROVIDERS_HPP
#define STREAMLIKE_CURRENT_STREAM_PROVIDERS_HPP

#include <streamlike/c/current_stream_provider.h>
#include <streamlike/current_stream.hpp>
#include <streamlike/detail/export.hpp>
#include <streamlike/stream_view.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace streamlike {

/// One registered provider, as current_stream_providers() lists it.
struct current_stream_provider_info {
  std::string name;
  std::int32_t priority = 0;
  bool can_set = false; // false: read-only (scoped_current_stream leaves it alone)
};

/// The registered providers, in the order current_stream() asks them (priority, then
/// registration). Looks for frameworks loaded since the last look first.
[[nodiscard]] STREAMLIKE_API std::vector<current_stream_provider_info> current_stream_providers();

/// Registers a provider (a copy of the struct and its name). Throws std::invalid_argument naming
/// what is wrong: no get function, no name, an unknown version, or a name already registered.
STREAMLIKE_API void register_current_stream_provider(const streamlike_current_stream_provider& provider);
/// Removes the provider named `name`; false when none is registered under it. streamlike's own
/// ("streamlike") cannot be removed (std::invalid_argument).
STREAMLIKE_API bool unregister_current_stream_provider(std::string_view name);

/// One provider's answer, as current_stream_conflicts() reports it.
struct current_stream_answer {
  std::string provider;
  stream_view stream;
};

/// Every provider's current stream on `device` for the calling thread, when at least two name
/// different streams (compared with same_current_stream: 0 and cudaStreamLegacy are one stream,
/// cudaStreamPerThread another; torch on its default stream while tvm-ffi names another stream is
/// a disagreement); empty when they agree. Providers that cannot answer now are left out, and so
/// is streamlike's own slot where no scope set it. The first entry is the one current_stream() returns.
[[nodiscard]] STREAMLIKE_API std::vector<current_stream_answer> current_stream_conflicts(int device = current_device);

} // namespace streamlike

#endif // STREAMLIKE_CURRENT_STREAM_PROVIDERS_HPP
