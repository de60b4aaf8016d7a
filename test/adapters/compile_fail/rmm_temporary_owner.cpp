// Promise: get_stream of a temporary rmm::cuda_stream does not compile (adapters/rmm.hpp makes it
// a stream_owner): the view would dangle when the temporary destroys its stream. The message
// points to export_stream, which moves the owner into a shared_stream instead.
// expected-error-re: view would dangle
// expected-error-re: export_stream
#include <streamlike/adapters/rmm.hpp>
#include <streamlike/export_stream.hpp>

void use() {
  rmm::cuda_stream named;
  (void)streamlike::get_stream(named);                 // viewing a named owner is fine
  (void)streamlike::export_stream(rmm::cuda_stream{}); // moving a temporary owner in is fine
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  (void)streamlike::get_stream(rmm::cuda_stream{});
#endif
}
