// Promise: get_stream of a void* does not compile: an untyped address is not a stream.
// expected-error-re: an integer, bool, nullptr or void\* is not a stream
#include <streamlike/get_stream.hpp>

void use(void* address) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::get_stream(address);
#endif
  (void)address;
}
