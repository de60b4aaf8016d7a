// Promise: a member get_stream() counts as a route only when it returns a stream handle; one that
// returns an int leaves the type without a route.
// expected-error-re: this type is not stream_like
#include <streamlike/get_stream.hpp>

namespace user {
struct int_member {
  int get_stream() const { return 0; }
};
} // namespace user

void use() {
  user::int_member value;
  (void)value.get_stream();
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::get_stream(value);
#endif
}
