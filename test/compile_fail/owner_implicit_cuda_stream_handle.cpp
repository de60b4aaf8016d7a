// Promise: an owner converts to cudaStream_t only explicitly (as rmm::cuda_stream): an implicit
// conversion would hand the still-owned handle to any cudaStream_t parameter unnoticed.
// expected-error-re: cannot convert 'const streamlike::shared_stream' to 'cudaStream_t'|no known conversion from 'const streamlike::shared_stream' to 'cudaStream_t'
#include <streamlike/shared_stream.hpp>

void take_handle(cudaStream_t);

void use(const streamlike::shared_stream& owner) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  take_handle(owner);
#else
  take_handle(static_cast<cudaStream_t>(owner));
#endif
}
