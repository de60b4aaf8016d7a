// Finding a function in a library the process has already loaded, without loading it and without
// a link-time dependency: how the built-in current-stream providers find their framework.
#ifndef STREAMLIKE_SRC_CURRENT_STREAM_DL_LOOKUP_HPP
#define STREAMLIKE_SRC_CURRENT_STREAM_DL_LOOKUP_HPP

#include <dlfcn.h>

namespace streamlike::detail::providers {

/// The library loaded under `soname` (dlopen with RTLD_NOLOAD: never loads it), or nullptr. The
/// reference dlopen adds is kept: the framework stays loaded while streamlike may call into it.
[[nodiscard]] inline void* loaded_library(const char* soname) noexcept {
  return dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
}

/// `name` in `library` as a function pointer of type F, or nullptr.
template <class F>
[[nodiscard]] F function_in(void* library, const char* name) noexcept {
  return library != nullptr ? reinterpret_cast<F>(dlsym(library, name)) : nullptr;
}

} // namespace streamlike::detail::providers

#endif // STREAMLIKE_SRC_CURRENT_STREAM_DL_LOOKUP_HPP
