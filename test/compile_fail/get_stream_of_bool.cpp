// Promise: get_stream of a bool does not compile (bool is integral, and never a stream).
// expected-error-re: an integer, bool, nullptr or void\* is not a stream
#include <streamlike/get_stream.hpp>

void use(bool flag) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::get_stream(flag);
#endif
  (void)flag;
}
