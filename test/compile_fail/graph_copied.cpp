// Promise: graph is move-only; a copy would destroy the graph twice.
// expected-error-re: (use of deleted function|call to deleted constructor|deleted)
#include <streamlike/graph.hpp>

#include <utility>

void use(streamlike::graph& owner) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::graph copy = owner;
#else
  streamlike::graph copy = std::move(owner);
#endif
  (void)copy;
}
