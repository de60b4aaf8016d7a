// streamlike/owned_stream.hpp: shared_stream to and from the C ABI for owning streams
// (<streamlike/c/owned_stream.h>; docs/owned-stream-abi.md is the specification).
//
// A streamlike_owned_stream is one owning reference, released by calling its deleter once.
// to_owned_stream() makes one that holds a copy of a shared_stream; from_owned_stream() turns one
// (from this library, another copy of streamlike, or any other producer) into a shared_stream
// whose last drop calls the deleter, from whichever thread drops it, taking no lock of its own.
#ifndef STREAMLIKE_OWNED_STREAM_HPP
#define STREAMLIKE_OWNED_STREAM_HPP

#include <streamlike/c/owned_stream.h>
#include <streamlike/detail/export.hpp>
#include <streamlike/shared_stream.hpp>

namespace streamlike {

/// A new owning reference to `stream`'s stream, for another library or language: the struct
/// holds a copy of `stream` until its deleter is called (exactly once, from any thread). Fills in
/// the facts the shared_stream already knows (STREAMLIKE_OWNED_STREAM_HAS_FACTS) and makes no
/// CUDA call; the default streams travel as their CUDA constants with their flag. Throws
/// streamlike::error on an empty shared_stream, std::bad_alloc if the struct cannot be allocated.
[[nodiscard]] STREAMLIKE_API streamlike_owned_stream* to_owned_stream(const shared_stream& stream);

/// A shared_stream that takes over the reference `owned` holds: its last copy calls
/// `owned->deleter(owned)`. Makes no CUDA call: the facts come from the struct (or, without
/// STREAMLIKE_OWNED_STREAM_HAS_FACTS, are queried by the first query that needs them). A default
/// stream's struct is released at once and the immortal default stream returned.
/// Refusals throw streamlike::error naming what was wrong and what was expected, after releasing
/// the struct (so nothing leaks): an unknown major version, a null handle, default-stream flags
/// that contradict the handle. A null pointer or a null deleter is refused too (there is nothing
/// that could release it).
[[nodiscard]] STREAMLIKE_API shared_stream from_owned_stream(streamlike_owned_stream* owned);

} // namespace streamlike

#endif // STREAMLIKE_OWNED_STREAM_HPP
