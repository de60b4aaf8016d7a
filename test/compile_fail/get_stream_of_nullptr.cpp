// Promise: get_stream(nullptr) does not compile, although nullptr converts to cudaStream_t.
// expected-error-re: an integer, bool, nullptr or void\* is not a stream
#include <streamlike/get_stream.hpp>

void use() {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::get_stream(nullptr);
#endif
}
