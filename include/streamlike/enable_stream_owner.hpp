// streamlike/enable_stream_owner.hpp: the opt-in that marks a type as owning its stream, and the
// opt-out for a type that is not one stream.
//
// Like std::ranges::enable_borrowed_range: specialize it to true for a type whose destructor
// destroys the stream it views. get_stream refuses rvalues of such types (the view would
// dangle) and export_stream moves them into a shared_stream instead.
#ifndef STREAMLIKE_ENABLE_STREAM_OWNER_HPP
#define STREAMLIKE_ENABLE_STREAM_OWNER_HPP

#include <streamlike/config.hpp>

namespace streamlike {

template <class T>
inline constexpr bool enable_stream_owner = false;

#if STREAMLIKE_HAS_CUDA_STREAM
// cuda::stream (CCCL 3.1+) destroys its stream on destruction.
template <>
inline constexpr bool enable_stream_owner<cuda::stream> = true;
#endif

/// The opt-out (as std::ranges::disable_sized_range): true for a type that has an accidental
/// get_stream route but is not one stream, such as a pool whose get_stream() hands out the next
/// stream on every call. get_stream refuses it and stream_like<T> is false.
template <class T>
inline constexpr bool disable_stream_like = false;

namespace detail {
/// get_stream refuses a temporary of T: true for owners, and for shared_stream, whose temporary
/// may hold the last reference.
template <class T>
inline constexpr bool view_dangles_from_temporary = enable_stream_owner<T>;
} // namespace detail

} // namespace streamlike

#endif // STREAMLIKE_ENABLE_STREAM_OWNER_HPP
