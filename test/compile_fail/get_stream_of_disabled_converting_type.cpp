// Promise: disable_stream_like<T> wins over every route, the handle route included: a type that
// opted out is refused although it converts implicitly to cudaStream_t, and the error says it
// opted out (not that it has no route). A generic function constrained on stream_like rejects it
// by its constraint.
// expected-error-re: opted out of stream_like \(disable_stream_like<T> is true\)
// unexpected-error-re: is not stream_like\.|ambiguous
#include <streamlike/disable_stream_like.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>

namespace user {
// Hands out the next stream of a pool on every conversion: not one stream.
struct converting_pool {
  operator cudaStream_t() const noexcept { return cudaStreamPerThread; } // NOLINT(google-explicit-constructor)
};
} // namespace user
template <>
inline constexpr bool streamlike::disable_stream_like<user::converting_pool> = true;

static_assert(!streamlike::stream_like<user::converting_pool&>);

void use(const user::converting_pool& pool) {
  const cudaStream_t next = pool; // the conversion itself stays available
  (void)next;
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::get_stream(pool);
#endif
}
