// streamlike/stream_owner.hpp: the concept of a type that owns the stream it views.
//
// "Owns" means sole ownership: destroying the object destroys the stream (unique_stream,
// cuda::stream, rmm::cuda_stream). Such a type's temporaries cannot be viewed (get_stream refuses
// them) and export_stream moves them into a shared_stream. shared_stream is deliberately not a
// stream_owner: it shares ownership, and destroying one shared_stream destroys the stream only
// when it is the last reference. It is a stream_exporter (stream_exporter.hpp) instead, and its
// temporaries are refused by get_stream for the same reason as an owner's.
#ifndef STREAMLIKE_STREAM_OWNER_HPP
#define STREAMLIKE_STREAM_OWNER_HPP

#include <streamlike/enable_stream_owner.hpp>
#include <streamlike/stream_like.hpp>

#include <type_traits>

namespace streamlike {

/// T owns its stream alone: destroying a T destroys the stream. Opt in with
/// enable_stream_owner<T>; the owner must also be stream_like as an lvalue. shared_stream is not
/// one (it shares ownership; see above).
// (add_lvalue_reference_t, not `std::remove_cvref_t<T>&`, which clang-format 14 misreads.)
template <class T>
concept stream_owner =
    enable_stream_owner<std::remove_cvref_t<T>> && stream_like<std::add_lvalue_reference_t<std::remove_cvref_t<T>>>;

} // namespace streamlike

#endif // STREAMLIKE_STREAM_OWNER_HPP
