// Promise: get_stream(0) does not compile. Which stream 0 means depends on a convention, so an
// integer is never a route (docs/routes.md, "Opting a type in").
// expected-error-re: an integer, bool, nullptr or void\* is not a stream
#include <streamlike/get_stream.hpp>

void use() {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::get_stream(0);
#endif
}
