// Promise: a tag_invoke(get_stream_t, ...) that returns something other than a stream handle is
// refused with a message that says what it must return (not silently skipped to other routes).
// expected-error-re: must\s+return a stream handle
#include <streamlike/get_stream.hpp>

namespace user {
struct returns_int {
  friend int tag_invoke(streamlike::get_stream_t, const returns_int&) { return 0; }
};
} // namespace user

void use() {
  user::returns_int value;
  (void)value;
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::get_stream(value);
#endif
}
