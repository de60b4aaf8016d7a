// Promise: members are called with the argument's own value category, so an &-qualified
// get_stream() serves lvalues but refuses a temporary (no route for the rvalue).
// expected-error-re: this type is not stream_like
#include <streamlike/get_stream.hpp>

namespace user {
struct lvalue_only {
  cudaStream_t handle{};
  cudaStream_t get_stream() & { return handle; }
};
} // namespace user

void use() {
  user::lvalue_only value;
  (void)streamlike::get_stream(value); // the lvalue has a route
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::get_stream(user::lvalue_only{});
#endif
}
