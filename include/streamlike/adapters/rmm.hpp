// streamlike/adapters/rmm.hpp: RMM's stream types (rmm::cuda_stream_view, rmm::cuda_stream,
// rmm::cuda_stream_pool).
//
// Include it in every translation unit that hands an RMM stream type to streamlike (a project's
// own wrapper header is the usual place): like std::ranges::enable_borrowed_range, the
// enable_stream_owner specialization below must be visible wherever the type is used.
//
//   rmm::cuda_stream_view   a view: stream_like through the core alone (route 2; it converts to
//                           cudaStream_t, which is preferred over its cuda::stream_ref conversion).
//                           Deprecated by RMM 26.x in favour of cuda::stream_ref, also stream_like,
//                           and removed by RMM 26.12 (with its header and the default-stream
//                           constants): this header includes it only where RMM still has it, and
//                           says so with STREAMLIKE_RMM_HAS_CUDA_STREAM_VIEW (1 or 0). Where it is
//                           gone, RMM's API takes and hands out cuda::stream_ref, which the core
//                           takes as it is.
//   rmm::cuda_stream        an owner (enable_stream_owner): get_stream views an lvalue, refuses a
//                           temporary, and export_stream(std::move(s)) moves it into a
//                           shared_stream. A moved-from one holds no stream: get_stream throws
//                           streamlike::error instead of dereferencing RMM's empty pointer.
//   rmm::cuda_stream_pool   NOT stream_like, deliberately. Its member get_stream() hands out the
//                           next stream of the pool on every call, so a generic function that
//                           asked for "the" stream twice would queue work on one stream and wait
//                           on another. The streams it hands out (pool.get_stream(),
//                           pool.get_stream(i)) are views and stream_like; they are valid while
//                           the pool lives. (streamlike's own stream_pool is not stream_like either.)
//   rmm::device_buffer, rmm::device_uvector and other types with a stream() member: stream_like
//                           through the core (route 3), their stream as set at the time of the call.
#ifndef STREAMLIKE_ADAPTERS_RMM_HPP
#define STREAMLIKE_ADAPTERS_RMM_HPP

#include <streamlike/enable_stream_owner.hpp>
#include <streamlike/error.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_pool.hpp>
#include <rmm/version_config.hpp>

// Both the header and the version: a release that kept a stub of the header is not taken for one
// that has the type.
#if __has_include(<rmm/cuda_stream_view.hpp>) && \
    (RMM_VERSION_MAJOR < 26 || (RMM_VERSION_MAJOR == 26 && RMM_VERSION_MINOR < 12))
#  define STREAMLIKE_RMM_HAS_CUDA_STREAM_VIEW 1
#  include <rmm/cuda_stream_view.hpp>
#else
#  define STREAMLIKE_RMM_HAS_CUDA_STREAM_VIEW 0
#endif

namespace streamlike {

template <>
inline constexpr bool enable_stream_owner<::rmm::cuda_stream> = true;

/// get_stream of an rmm::cuda_stream lvalue (temporaries are refused before this is considered).
inline stream_view tag_invoke(get_stream_t, const ::rmm::cuda_stream& owner) {
  if (!owner.is_valid()) [[unlikely]] {
    throw error(cudaErrorInvalidResourceHandle, "get_stream(rmm::cuda_stream): the rmm::cuda_stream is moved-from "
                                                "and owns no stream; expected one that owns a stream");
  }
  return stream_view{owner.value()};
}

/// Refuses rmm::cuda_stream_pool (see the file comment): stream_like<rmm::cuda_stream_pool&> is false.
template <>
inline constexpr bool disable_stream_like<::rmm::cuda_stream_pool> = true;

} // namespace streamlike

#endif // STREAMLIKE_ADAPTERS_RMM_HPP
