// Promise: a view cannot be exported: it owns nothing, so there is nothing to keep alive.
// expected-error-re: carries no ownership
#include <streamlike/export_stream.hpp>

void use(streamlike::stream_view view) {
  (void)view;
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  (void)streamlike::export_stream(view);
#endif
}
