// streamlike/stream_owner.hpp: the concept of a type that owns the stream it views.
#ifndef STREAMLIKE_STREAM_OWNER_HPP
#define STREAMLIKE_STREAM_OWNER_HPP

#include <streamlike/enable_stream_owner.hpp>
#include <streamlike/stream_like.hpp>

#include <type_traits>

namespace streamlike {

/// T owns its stream: destroying a T destroys the stream. Opt in with enable_stream_owner<T>;
/// the owner must also be stream_like as an lvalue. shared_stream is not an owner (it shares).
template <class T>
concept stream_owner = enable_stream_owner<std::remove_cvref_t<T>> && stream_like<std::remove_cvref_t<T>&>;

} // namespace streamlike

#endif // STREAMLIKE_STREAM_OWNER_HPP
