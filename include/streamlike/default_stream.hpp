// streamlike/default_stream.hpp: what the handle `0` means, decided in the caller's translation unit.
//
// CUDA reads the handle 0 as the legacy default stream, or as the per-thread default stream in a
// translation unit compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM (nvcc --default-stream
// per-thread). A compiled library cannot know which its caller meant (RMM got this wrong after
// moving stream code into librmm), so the decision is made here, in inline functions compiled
// into the caller.
//
// Translation units of both modes may meet in one program. An inline function whose body differs
// by macro would be an ODR violation (the linker keeps one body for both), so each mode gets its
// own inline namespace, as libstdc++ does for its ABI tags: the functions below are distinct
// entities in the two modes and `streamlike::resolve_default` names the caller's own.
#ifndef STREAMLIKE_DEFAULT_STREAM_HPP
#define STREAMLIKE_DEFAULT_STREAM_HPP

#include <streamlike/stream_view.hpp>

namespace streamlike {

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
inline namespace default_stream_per_thread {
/// True where this translation unit reads the handle 0 as the per-thread default stream.
inline constexpr bool default_stream_is_per_thread = true;
#else
inline namespace default_stream_legacy {
inline constexpr bool default_stream_is_per_thread = false;
#endif

/// The default stream of this translation unit, as an explicit handle that means the same
/// stream wherever it is passed: cudaStreamPerThread or cudaStreamLegacy.
[[nodiscard]] inline stream_view default_stream() noexcept {
  return default_stream_is_per_thread ? stream_view::per_thread_default() : stream_view::legacy_default();
}

/// `view`, with the ambiguous handle 0 replaced by this translation unit's explicit default
/// stream. Call it at the API edge before handing a view to compiled code.
[[nodiscard]] inline stream_view resolve_default(stream_view view) noexcept {
  return view.get() == cudaStream_t{} ? default_stream() : view;
}

/// True if `view` is the legacy default stream as this translation unit reads it.
[[nodiscard]] inline bool is_legacy_default(stream_view view) noexcept {
  return resolve_default(view) == stream_view::legacy_default();
}

/// True if `view` is the calling thread's per-thread default stream as this translation unit reads it.
[[nodiscard]] inline bool is_per_thread_default(stream_view view) noexcept {
  return resolve_default(view) == stream_view::per_thread_default();
}

} // inline namespace default_stream_{legacy,per_thread}
} // namespace streamlike

#endif // STREAMLIKE_DEFAULT_STREAM_HPP
