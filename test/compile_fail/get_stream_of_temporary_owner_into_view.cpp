// Promise: `stream_view v = get_stream(temporary owner)` does not compile and names export_stream
// under every compiler: converting the refusal's result (temporary_owner_use_export_stream) to a
// stream_view fails with the same message, where nvcc otherwise said only "no suitable
// constructor exists to convert from void".
// expected-error-re: view would dangle
// expected-error-re: export_stream\(std::move\(owner\)\)
// unexpected-error-re: from "?void
#include "member_owner.hpp"

void use() {
  user::owner named;
  streamlike::stream_view fine = streamlike::get_stream(named);
  (void)fine;
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::stream_view dangling = streamlike::get_stream(user::owner{});
  (void)dangling;
#endif
}
