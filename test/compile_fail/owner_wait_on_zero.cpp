// Promise: `owner.wait(0)` does not compile for shared_stream and unique_stream: 0 is neither an
// event nor a stream. The refusal is the owners' deleted wait(Integer) (detail::owner_operations),
// not the ambiguity between wait(cudaEvent_t) and wait(std::nullptr_t) that remains without it.
// clang++ names no owner in its note: its two errors are told apart by the source line.
// expected-error-re: use of deleted function 'void streamlike::detail::owner_operations<Derived>::wait\(Integer\) const \[with Integer = int; Derived = streamlike::shared_stream\]'|owner_wait_on_zero\.cpp:14:\d+: error: call to deleted member function 'wait'\n[^\n]*\n[^\n]*\n[^\n]*owner_operations\.hpp:\d+:\d+: note: candidate function \[with Integer = int\] has been explicitly deleted
// expected-error-re: use of deleted function 'void streamlike::detail::owner_operations<Derived>::wait\(Integer\) const \[with Integer = int; Derived = streamlike::unique_stream\]'|owner_wait_on_zero\.cpp:15:\d+: error: call to deleted member function 'wait'\n[^\n]*\n[^\n]*\n[^\n]*owner_operations\.hpp:\d+:\d+: note: candidate function \[with Integer = int\] has been explicitly deleted
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
