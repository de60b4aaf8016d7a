// Promise: `view.wait(nullptr)` does not compile: nullptr is neither an event nor a stream. Without
// the deleted wait(std::nullptr_t) it would silently become a null cudaEvent_t, so the error must
// name that overload (g++: the deleted function; clang++: the deleted candidate it selected).
// expected-error-re: use of deleted function 'void streamlike::stream_view::wait\(std::nullptr_t\) const'|call to deleted member function 'wait'\n[^\n]*\n[^\n]*\n[^\n]*note: candidate function has been explicitly deleted\n\s*void wait\(std::nullptr_t\) const = delete
// unexpected-error-re: ambiguous
#include <streamlike/stream_view.hpp>

void use(streamlike::stream_view consumer, streamlike::stream_view producer) {
  consumer.wait(producer); // a stream is fine
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  consumer.wait(nullptr);
#endif
}
