// Promise: `view.wait(0)` does not compile: 0 is neither an event nor a stream. The refusal is the
// deleted wait(Integer) (g++: the deleted function; clang++: the deleted candidate it selected), not
// the ambiguity between wait(cudaEvent_t) and wait(std::nullptr_t) that remains without it (and
// without both, 0 would silently become a null cudaEvent_t).
// expected-error-re: use of deleted function 'void streamlike::stream_view::wait\(Integer\) const \[with Integer = int\]'|call to deleted member function 'wait'\n[^\n]*\n[^\n]*\n[^\n]*note: candidate function \[with Integer = int\] has been explicitly deleted
// unexpected-error-re: ambiguous
#include <streamlike/stream_view.hpp>

void use(streamlike::stream_view consumer, streamlike::stream_view producer) {
  consumer.wait(producer); // a stream is fine
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  consumer.wait(0);
#endif
}
