// Promise: get_stream of a type that opted out with disable_stream_like does not compile, even
// though the type has a member get_stream() route, and the error says it opted out.
// expected-error-re: opted out of stream_like \(disable_stream_like<T> is true\)
#include <streamlike/disable_stream_like.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_view.hpp>

struct pool {
  streamlike::stream_view get_stream() const noexcept { return streamlike::stream_view::per_thread_default(); }
};
template <>
inline constexpr bool streamlike::disable_stream_like<pool> = true;

void use(const pool& p) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::get_stream(p);
#endif
  (void)p;
}
