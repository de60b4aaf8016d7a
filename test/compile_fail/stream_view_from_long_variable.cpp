// Promise: a stream_view cannot be made from an integer variable (not only from a literal 0):
// an address must go through from_address() or another named decoder.
// expected-error-re: deleted function '[^']*\[with Integer = long( int)?\]'|'stream_view<long>' has been explicitly marked deleted
#include <streamlike/stream_view.hpp>

void use(long address) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::stream_view view{address};
  (void)view;
#endif
  (void)address;
}
