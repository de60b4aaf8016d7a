// Promise: capture_scope is move-only; a copy would end the same capture twice.
// expected-error-re: (use of deleted function|call to deleted constructor|deleted)
#include <streamlike/capture.hpp>

#include <utility>

void use(streamlike::capture_scope& scope) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::capture_scope copy = scope;
#else
  streamlike::capture_scope copy = std::move(scope);
#endif
  (void)copy;
}
