// streamlike/adapters/cccl.hpp: CCCL's stream types and streamlike's, in both directions.
//
// Most of the CCCL bridge is in the core, because stream_view is defined in terms of
// cuda::stream_ref; this header adds what needs more than a conversion. What holds, with the
// CCCL of CUDA 13.0 (3.0) and with newer ones (3.1+: <cuda/stream>, cuda::stream, cuda::get_stream):
//
//   CCCL -> streamlike (core)
//     cuda::stream_ref                 stream_like (route 2: a handle)
//     cuda::stream (3.1+)              a stream_owner (enable_stream_owner.hpp): get_stream of an
//                                      lvalue views it, of a temporary does not compile, and
//                                      export_stream(std::move(s)) moves it into a shared_stream
//     a type written for cuda::get_stream, with get_stream(), stream() or query(cuda::get_stream_t)
//                                      stream_like unchanged (route 3), e.g. cuda::buffer, and
//                                      environments such as cuda::std::execution::prop{cuda::get_stream, s}
//   streamlike -> CCCL (core)
//     stream_view                      converts implicitly to cuda::stream_ref, so it is accepted
//                                      wherever CCCL takes one, and by cuda::get_stream
//     unique_stream, shared_stream     accepted by cuda::get_stream through their get_stream() member
//                                      (CCCL takes any argument by const&, so it cannot refuse a
//                                      temporary as streamlike::get_stream does: keep the owner in a
//                                      variable)
//   this header
//     stream_ref_of(s)                 a cuda::stream_ref for any stream_like (a cublasHandle_t, a
//                                      thrust policy...): a CCCL environment, which a stream_view is not
//     to_cuda_stream / to_unique_stream (3.1+)
//                                      move ownership between unique_stream and cuda::stream
//                                      without creating or destroying a stream
#ifndef STREAMLIKE_ADAPTERS_CCCL_HPP
#define STREAMLIKE_ADAPTERS_CCCL_HPP

#include <streamlike/config.hpp> // <cuda/stream> where the CCCL has it, else <cuda/stream_ref>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_owner.hpp>
#include <streamlike/stream_view.hpp>
#include <streamlike/unique_stream.hpp>

#include <stdexcept>
#include <utility>

namespace streamlike::adapters::cccl {

/// The cuda::stream_ref of any stream_like `s`. cuda::stream_ref is itself a CCCL environment
/// (it answers query(cuda::get_stream_t) where the CCCL has it), so the result goes where CCCL
/// takes a stream_ref or an environment; it is as borrowed as get_stream(s).
template <class S>
  requires stream_like<S>
[[nodiscard]] constexpr ::cuda::stream_ref stream_ref_of(S&& s) noexcept(nothrow_stream_like<S>) {
  return streamlike::get_stream(std::forward<S>(s));
}

#if STREAMLIKE_HAS_CUDA_STREAM
/// Hands a unique_stream's stream to a cuda::stream, which destroys it from then on. Throws
/// streamlike::error on an empty unique_stream (a cuda::stream cannot be empty but moved-from).
[[nodiscard]] inline ::cuda::stream to_cuda_stream(unique_stream&& owner) {
  static_cast<void>(owner.get()); // throws if empty, before anything is given up
  return ::cuda::stream::from_native_handle(owner.release());
}

/// Hands a cuda::stream's stream to a unique_stream. A moved-from (or released) cuda::stream holds
/// CCCL's invalid handle, not a stream: refused with std::invalid_argument, as is a default stream.
[[nodiscard]] inline unique_stream to_unique_stream(::cuda::stream&& owner) {
  // CCCL marks a moved-from cuda::stream with the handle ~0 (cuda::__invalid_stream()).
  if (owner.get() == reinterpret_cast<cudaStream_t>(~0ull)) {
    throw std::invalid_argument("streamlike::adapters::cccl::to_unique_stream: the cuda::stream is moved-from or "
                                "released (CCCL's invalid handle); expected one that owns a stream");
  }
  unique_stream result = unique_stream::adopt(owner.get()); // may refuse (a default stream): owner keeps it then
  static_cast<void>(owner.release());
  return result;
}
#endif

} // namespace streamlike::adapters::cccl

#endif // STREAMLIKE_ADAPTERS_CCCL_HPP
