// Promise: a scope cannot make a temporary owner current: the owner (and its stream) would die at
// the end of the statement while the scope, and every framework it set, still named the stream.
// The constraint that refuses it is stream_like (get_stream refuses rvalue owners).
// expected-error-re: (stream_like|constraints not satisfied|no matching)
#include "member_owner.hpp"

#include <streamlike/current_stream.hpp>

void use() {
  user::owner named;
  const streamlike::scoped_current_stream fine{named, 0}; // a named owner outlives the scope
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  const streamlike::scoped_current_stream dangling{user::owner{}, 0};
#endif
}
