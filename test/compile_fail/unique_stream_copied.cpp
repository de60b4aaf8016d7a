// Promise: unique_stream is move-only; a copy would destroy the stream twice.
// expected-error-re: (use of deleted function|call to deleted constructor|deleted)
#include <streamlike/unique_stream.hpp>

#include <utility>

void use(streamlike::unique_stream& owner) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::unique_stream copy = owner;
#else
  streamlike::unique_stream copy = std::move(owner);
#endif
  (void)copy;
}
