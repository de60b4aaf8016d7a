// streamlike/disable_stream_like.hpp: the opt-out for a type that has a get_stream route by
// accident but is not one stream.
#ifndef STREAMLIKE_DISABLE_STREAM_LIKE_HPP
#define STREAMLIKE_DISABLE_STREAM_LIKE_HPP

namespace streamlike {

/// The opt-out (as std::ranges::disable_sized_range): specialize it to true for a type that has
/// an accidental get_stream route but is not one stream, such as a pool whose get_stream() hands
/// out the next stream on every call. get_stream refuses it (a static_assert says why) and
/// stream_like<T> is false.
template <class T>
inline constexpr bool disable_stream_like = false;

} // namespace streamlike

#endif // STREAMLIKE_DISABLE_STREAM_LIKE_HPP
