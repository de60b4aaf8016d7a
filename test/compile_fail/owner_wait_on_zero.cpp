// Promise: `owner.wait(0)` does not compile for shared_stream and unique_stream: 0 is neither an
// event nor a stream. The refusal is each owner's deleted wait(Integer), not the ambiguity between
// wait(cudaEvent_t) and wait(std::nullptr_t) that remains without it.
// expected-error-re: use of deleted function 'void streamlike::shared_stream::wait\(Integer\) const \[with Integer = int\]'|call to deleted member function 'wait'\n[^\n]*\n[^\n]*\n[^\n]*shared_stream\.hpp:\d+:\d+: note: candidate function \[with Integer = int\] has been explicitly deleted
// expected-error-re: use of deleted function 'void streamlike::unique_stream::wait\(Integer\) const \[with Integer = int\]'|call to deleted member function 'wait'\n[^\n]*\n[^\n]*\n[^\n]*unique_stream\.hpp:\d+:\d+: note: candidate function \[with Integer = int\] has been explicitly deleted
// unexpected-error-re: ambiguous
#include <streamlike/shared_stream.hpp>
#include <streamlike/unique_stream.hpp>

void use(const streamlike::shared_stream& shared, const streamlike::unique_stream& unique) {
  shared.wait(unique); // a stream is fine
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  shared.wait(0);
  unique.wait(0);
#endif
}
