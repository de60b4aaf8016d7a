// Promise: a function constrained on stream_like<S&> ("an lvalue of S can be viewed") takes a
// temporary owner in, and the get_stream inside refuses it with the message that names
// export_stream, under g++, clang++ and nvcc alike: the form to write where nvcc compiles the
// caller, since nvcc does not say why a constraint failed.
// expected-error-re: view would dangle
// expected-error-re: export_stream\(std::move\(owner\)\)
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_like.hpp>

#include <utility>

template <class S>
  requires streamlike::stream_like<S&> streamlike::stream_view enqueue(S&& stream) {
    return streamlike::get_stream(std::forward<S>(stream));
  }

void use(streamlike::shared_stream& named) {
  (void)enqueue(named);
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  (void)enqueue(streamlike::shared_stream::create());
#endif
}
