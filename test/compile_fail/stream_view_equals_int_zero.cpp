// Promise: `view == 0` does not compile: it would compare with the ambiguous handle 0 (which
// default stream 0 means depends on the translation unit). cuda::stream_ref refuses it too.
// expected-error-re: (use of deleted function|call to deleted function|deleted)
#include <streamlike/stream_view.hpp>

bool use(streamlike::stream_view view) {
  bool same = view == streamlike::stream_view::legacy_default(); // comparing views is fine
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  same = view == 0;
#endif
  return same;
}
