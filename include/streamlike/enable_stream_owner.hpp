// streamlike/enable_stream_owner.hpp: the opt-in that marks a type as owning its stream.
//
// Like std::ranges::enable_borrowed_range: specialize it to true for a type whose destructor
// destroys the stream it views. get_stream refuses rvalues of such types (the view would
// dangle) and export_stream moves them into a shared_stream instead.
#ifndef STREAMLIKE_ENABLE_STREAM_OWNER_HPP
#define STREAMLIKE_ENABLE_STREAM_OWNER_HPP

#include <streamlike/config.hpp>

namespace streamlike {

/// True for a type whose destructor destroys the stream it views (see stream_owner.hpp).
template <class T>
inline constexpr bool enable_stream_owner = false;

#if STREAMLIKE_HAS_CUDA_STREAM
// cuda::stream (CCCL 3.1+) destroys its stream on destruction.
template <>
inline constexpr bool enable_stream_owner<cuda::stream> = true;
#endif

} // namespace streamlike

#endif // STREAMLIKE_ENABLE_STREAM_OWNER_HPP
