// Promise: retain_until_done refuses an object whose destructor may throw: it is destroyed on a
// streamlike thread, where the exception could go nowhere.
// expected-error-re: destructor must not throw
#include <streamlike/retain_until_done.hpp>

struct throwing {
  ~throwing() noexcept(false) {}
};
struct quiet {};

void use(cudaStream_t stream) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::retain_until_done(stream, throwing{});
#else
  streamlike::retain_until_done(stream, quiet{});
#endif
}
