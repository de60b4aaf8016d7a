// Promise: get_stream of an rmm::cuda_stream_pool does not compile (adapters/rmm.hpp refuses it:
// each pool.get_stream() hands out the next stream, so the pool is not one stream), while the
// views the pool hands out are accepted.
// expected-error-re: streamlike::get_stream
// expected-error-re: cuda_stream_pool
// expected-error-re: opted out of stream_like
#include <streamlike/adapters/rmm.hpp>

void use(const rmm::cuda_stream_pool& pool) {
  (void)streamlike::get_stream(pool.get_stream()); // one stream taken from the pool: fine
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  (void)streamlike::get_stream(pool);
#endif
}
