// Promise: `view.wait(0)` and `view.wait(nullptr)` do not compile: neither is an event or a
// stream (without the deleted overloads, 0 would silently become a null cudaEvent_t).
// expected-error-re: (use of deleted function|call to deleted member function|deleted)
#include <streamlike/stream_view.hpp>

void use(streamlike::stream_view consumer, streamlike::stream_view producer) {
  consumer.wait(producer); // a stream is fine
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  consumer.wait(0);
#endif
}
