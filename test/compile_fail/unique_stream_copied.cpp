// Promise: unique_stream is move-only; a copy would destroy the stream twice.
// The error names the deleted copy constructor (g++: the function; clang++: where it is deleted).
// expected-error-re: use of deleted function 'streamlike::unique_stream::unique_stream\(const streamlike::unique_stream&\)'|call to deleted constructor of 'streamlike::unique_stream'\n[^\n]*\n[^\n]*\n[^\n]*note: 'unique_stream' has been explicitly marked deleted here\n\s*unique_stream\(const unique_stream&\) = delete
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
