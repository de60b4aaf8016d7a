// Promise: `stream_view v = nullptr;` does not compile, though nullptr converts to cudaStream_t:
// the nullptr constructor is deleted, so the refusal is explicit rather than an ambiguity.
// expected-error-re: deleted function '[^']*stream_view\(std::nullptr_t\)'|'std::nullptr_t' to 'streamlike::stream_view' invokes a deleted function
#include <streamlike/stream_view.hpp>

void use() {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::stream_view view = nullptr;
  (void)view;
#endif
}
