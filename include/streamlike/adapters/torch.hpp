// streamlike/adapters/torch.hpp: PyTorch's c10::cuda::CUDAStream (also at::cuda::CUDAStream).
//
// Include it in every translation unit that hands a CUDAStream to streamlike: it replaces the
// core's plain conversion route with the one below, and the two must not meet in one program.
//
// A CUDAStream is a value naming one of three kinds of stream (see c10/cuda/CUDAStream.h):
//   the default stream   (StreamId 0): the handle 0, which libtorch, compiled without per-thread
//                        default streams, reads as the legacy default stream. get_stream yields
//                        stream_view::legacy_default(), whatever the calling translation unit's
//                        default-stream mode; export_stream yields the immortal
//                        shared_stream::legacy_default(). Like every default stream it names the
//                        default stream of the *current* device: make device_of(s) current first.
//   a pool stream        (getStreamFromPool, getNonCapturingStreamFromPool): created once per
//                        device and never destroyed (c10's LeakyStreamInternals), so export_stream
//                        shares it without owning anything.
//   an external stream   (getStreamFromExternal): a foreign handle that c10 neither owns nor keeps
//                        alive. get_stream views it; export_stream refuses it
//                        (std::invalid_argument), since nothing could keep it alive: export the
//                        stream's real owner instead.
// The device comes from c10's metadata (device_of), never from a driver query, so looking at a
// stream on device 3 does not make a context on device 0.
#ifndef STREAMLIKE_ADAPTERS_TORCH_HPP
#define STREAMLIKE_ADAPTERS_TORCH_HPP

#include <streamlike/export_stream.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <c10/cuda/CUDAStream.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace streamlike::adapters::torch {

/// The three kinds of stream a CUDAStream can name (header comment).
enum class stream_kind { default_stream, pool, external };

/// Which kind of stream `s` names, from its StreamId: 0 is the default stream (an invariant of
/// c10::Stream); an external stream's id is its handle (c10 says so where it encodes ids); every
/// other id is a pool stream's.
[[nodiscard]] inline stream_kind kind_of(const c10::cuda::CUDAStream& s) {
  const c10::StreamId id = s.id();
  if (id == 0) return stream_kind::default_stream;
  if (static_cast<std::intptr_t>(id) == reinterpret_cast<std::intptr_t>(s.stream())) return stream_kind::external;
  return stream_kind::pool;
}

/// The stream's device, as c10 recorded it: no CUDA call.
[[nodiscard]] inline int device_of(const c10::cuda::CUDAStream& s) noexcept { return s.device_index(); }

namespace detail {
/// What a shared_stream of a pool stream holds: nothing, since the stream is never destroyed.
struct immortal_pool_stream {};
} // namespace detail

} // namespace streamlike::adapters::torch

namespace streamlike {

/// get_stream of a CUDAStream: its handle, with libtorch's default stream (handle 0) made explicit.
inline stream_view tag_invoke(get_stream_t, const c10::cuda::CUDAStream& s) {
  const cudaStream_t handle = s.stream();
  return handle == cudaStream_t{} ? stream_view::legacy_default() : stream_view{handle};
}

/// export_stream of a CUDAStream: shares the default and pool streams, which never die; refuses an
/// external stream, whose lifetime is not c10's to extend.
inline shared_stream tag_invoke(export_stream_t, const c10::cuda::CUDAStream& s) {
  namespace torch = adapters::torch;
  switch (torch::kind_of(s)) {
    case torch::stream_kind::default_stream: return shared_stream::legacy_default();
    case torch::stream_kind::pool:
      return shared_stream::keep_alive(stream_view{s.stream()}, torch::detail::immortal_pool_stream{});
    case torch::stream_kind::external: break;
  }
  throw std::invalid_argument(
      "streamlike::export_stream(c10::cuda::CUDAStream): stream " +
      std::to_string(reinterpret_cast<std::uintptr_t>(s.stream())) +
      " is external (c10::cuda::getStreamFromExternal): c10 does not own it and cannot keep it alive; expected a "
      "default or pool stream. Export the stream's owner instead (e.g. a shared_stream, or "
      "shared_stream::keep_alive(view, owner)).");
}

} // namespace streamlike

#endif // STREAMLIKE_ADAPTERS_TORCH_HPP
