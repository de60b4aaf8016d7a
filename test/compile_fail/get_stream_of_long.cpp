// Promise: get_stream of a long (say, a stream address handed over from Python) does not
// compile: integers go through the named decoders of stream_encodings.hpp.
// expected-error-re: an integer, bool, nullptr or void\* is not a stream
// The message must point at the decoders, not just refuse.
// expected-error-re: from_address
#include <streamlike/get_stream.hpp>

void use(long address) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::get_stream(address);
#endif
  (void)address;
}
