// Promise: export_stream of an lvalue owner does not compile: the owner is moved into the
// shared_stream, so the call must say so with std::move.
// expected-error-re: std::move\(owner\)
#include <streamlike/export_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <utility>

void use(streamlike::unique_stream& owner) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  (void)streamlike::export_stream(owner);
#endif
  (void)streamlike::export_stream(std::move(owner));
}
