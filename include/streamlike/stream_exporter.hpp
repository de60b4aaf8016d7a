// streamlike/stream_exporter.hpp: the concept of everything export_stream accepts.
#ifndef STREAMLIKE_STREAM_EXPORTER_HPP
#define STREAMLIKE_STREAM_EXPORTER_HPP

#include <streamlike/export_stream.hpp>
#include <streamlike/shared_stream.hpp>

#include <concepts>
#include <utility>

namespace streamlike {

/// `streamlike::export_stream(t)` yields a shared_stream that keeps the stream alive for as long
/// as the importer holds it, for an expression `t` of type `T&&` (reference collapsing applies):
/// `stream_exporter<unique_stream>` holds (the owner is moved in), `stream_exporter<unique_stream&>`
/// does not (an lvalue owner must be std::move'd explicitly), and a view (stream_view,
/// cudaStream_t, cuda::stream_ref) is never one: it carries no ownership.
template <class T>
concept stream_exporter = requires(T&& t) {
  { streamlike::export_stream(std::forward<T>(t)) } -> std::same_as<shared_stream>;
};

} // namespace streamlike

#endif // STREAMLIKE_STREAM_EXPORTER_HPP
