// Promise: scoped_current_stream is a scope: neither copyable nor movable (a copy would restore the
// previous streams twice).
// expected-error-re: (use of deleted function|call to deleted constructor|deleted)
#include <streamlike/current_stream.hpp>

void use(const streamlike::scoped_current_stream& scope) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  const streamlike::scoped_current_stream copy = scope;
  (void)copy;
#else
  (void)scope;
#endif
}
