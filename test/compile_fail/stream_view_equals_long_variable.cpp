// Promise: `view == some_long` does not compile: an integer variable (a stream address handed
// over from Python, say) is not a handle; decode it with from_address() first. The refusal is the
// deleted operator==(stream_view, Integer): without it the call would pick the cuda::stream_ref
// overload and fail on stream_ref's own deleted constructor, or, with another CCCL, compile.
// expected-error-re: use of deleted function 'bool streamlike::operator==\(stream_view, Integer\) \[with Integer = long( int)?;|overload resolution selected deleted operator '=='\n[^\n]*\n[^\n]*\n[^\n]*note: candidate function \[with Integer = long\] has been explicitly deleted
// unexpected-error-re: ambiguous
#include <streamlike/stream_encodings.hpp>
#include <streamlike/stream_view.hpp>

bool use(streamlike::stream_view view, long some_long) {
  bool same = view == streamlike::from_address(some_long); // the named decoder is the way
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  same = view == some_long;
#endif
  return same;
}
