// Promise: `view == nullptr` does not compile: a view is never "null", and the null handle is
// the ambiguous default stream 0.
// expected-error-re: (use of deleted function|call to deleted function|deleted)
#include <streamlike/stream_view.hpp>

bool use(streamlike::stream_view view) {
  bool same = view == cudaStream_t{}; // an explicit handle is fine
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  same = nullptr == view;
#endif
  return same;
}
