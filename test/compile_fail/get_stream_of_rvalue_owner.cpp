// Promise: get_stream of an rvalue stream owner (enable_stream_owner<T> is true) does not compile,
// because the view would dangle when the temporary dies; the message points to export_stream.
// expected-error-re: view would dangle
// expected-error-re: export_stream
#include "member_owner.hpp"

void use() {
  user::owner named;
  (void)streamlike::get_stream(named); // viewing a named owner is fine
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::get_stream(user::owner{});
#endif
}
