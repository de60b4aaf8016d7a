// Promise: stream_view has no default constructor (CCCL deprecated its own, NVIDIA/cccl#5310);
// the default streams are named: legacy_default(), per_thread_default().
// expected-error-re: deleted function 'streamlike::stream_view::stream_view\(\)'|call to deleted constructor of 'streamlike::stream_view'
#include <streamlike/stream_view.hpp>

void use() {
  streamlike::stream_view named = streamlike::stream_view::per_thread_default();
  (void)named;
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::stream_view view;
  (void)view;
#endif
}
