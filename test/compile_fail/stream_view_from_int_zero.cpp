// Promise: stream_view{0} does not compile (the classic "0 means some default stream" bug).
// g++ names the deleted integer constructor; clang++ names the deleted specialization.
// expected-error-re: deleted function '[^']*stream_view\(Integer\) \[with Integer = int\]'|'stream_view<int>' has been explicitly marked deleted
#include <streamlike/stream_view.hpp>

void use() {
  // The named default stream is the way to say "default": it must keep compiling.
  streamlike::stream_view ok = streamlike::stream_view::legacy_default();
  (void)ok;
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::stream_view view{0};
  (void)view;
#endif
}
