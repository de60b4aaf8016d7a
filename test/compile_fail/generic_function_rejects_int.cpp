// Promise: a generic function constrained on stream_like rejects an int by its constraint (no
// matching overload), and checking the concept does not trip get_stream's static_asserts
// (the fallback overload returns void, so stream_like<int> is simply false).
// expected-error-re: constraints not satisfied
// expected-error-re: stream_like
// unexpected-error-re: is not a stream|static assertion failed|static_assert failed
#include <streamlike/stream_like.hpp>

template <streamlike::stream_like S>
void enqueue(S&& stream) {
  (void)streamlike::get_stream(static_cast<S&&>(stream));
}

void use() {
  enqueue(streamlike::stream_view::legacy_default());
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  enqueue(0);
#endif
}
