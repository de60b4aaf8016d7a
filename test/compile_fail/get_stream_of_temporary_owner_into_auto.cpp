// Promise: `auto v = get_stream(temporary owner)` does not compile and names export_stream, under
// nvcc too (which stopped at "cannot deduce auto type" while the refusal returned void): the call
// returns temporary_owner_use_export_stream, and the call's static_assert says what to do.
// expected-error-re: view would dangle
// expected-error-re: export_stream\(std::move\(owner\)\)
#include <streamlike/shared_stream.hpp>

void use(streamlike::shared_stream& named) {
  auto view = streamlike::get_stream(named);
  (void)view;
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  auto dangling = streamlike::get_stream(streamlike::shared_stream::create());
  (void)dangling;
#endif
}
