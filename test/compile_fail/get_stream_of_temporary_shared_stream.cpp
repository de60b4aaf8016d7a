// Promise: get_stream of a temporary shared_stream does not compile: it may hold the last
// reference, so the view would dangle when it dies. A named shared_stream is fine.
// expected-error-re: view would dangle
#include <streamlike/shared_stream.hpp>

void use(streamlike::shared_stream& named) {
  (void)streamlike::get_stream(named);
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  (void)streamlike::get_stream(streamlike::shared_stream::create());
#endif
}
