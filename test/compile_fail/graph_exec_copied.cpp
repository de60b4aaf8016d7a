// Promise: graph_exec is move-only; a copy would destroy the executable graph twice.
// expected-error-re: (use of deleted function|call to deleted constructor|deleted)
#include <streamlike/graph.hpp>

#include <utility>

void use(streamlike::graph_exec& owner) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::graph_exec copy = owner;
#else
  streamlike::graph_exec copy = std::move(owner);
#endif
  (void)copy;
}
