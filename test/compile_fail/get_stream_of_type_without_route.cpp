// Promise: a type with none of the routes is refused at the call, with a message that says it is
// not stream_like and names the ways to opt in.
// expected-error-re: this type is not stream_like
// expected-error-re: tag_invoke\(streamlike::get_stream_t
#include <streamlike/get_stream.hpp>

namespace user {
struct no_route {
  int stream_id = 0; // a field named like a stream is not a route
};
} // namespace user

void use() {
  user::no_route value;
  (void)value;
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::get_stream(value);
#endif
}
