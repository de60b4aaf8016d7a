// Promise: `view == 0` does not compile: it would compare with the ambiguous handle 0 (which
// default stream 0 means depends on the translation unit). cuda::stream_ref refuses it too. The
// refusal is the deleted operator==(stream_view, Integer), not an ambiguity between the handle
// overloads (which is what remains without it, and would still "fail to compile").
// expected-error-re: use of deleted function 'bool streamlike::operator==\(stream_view, Integer\) \[with Integer = int;|overload resolution selected deleted operator '=='\n[^\n]*\n[^\n]*\n[^\n]*note: candidate function \[with Integer = int\] has been explicitly deleted
// unexpected-error-re: ambiguous
#include <streamlike/stream_view.hpp>

bool use(streamlike::stream_view view) {
  bool same = view == streamlike::stream_view::legacy_default(); // comparing views is fine
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  same = view == 0;
#endif
  return same;
}
