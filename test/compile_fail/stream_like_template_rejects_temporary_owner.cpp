// Promise: a function constrained on stream_like refuses a temporary owner by its constraint, and
// g++ and clang++ name export_stream in the note that says which constraint failed (stream_like
// tests not_a_temporary_owner_else_use_export_stream<T> first). nvcc names no unsatisfied
// constraint at all, only the function: the form in stream_like_lvalue_template_reports_temporary_owner.cpp
// reports it there.
// expected-error-re(g++,clang++): not_a_temporary_owner_else_use_export_stream<.*shared_stream.* evaluated to .?false
// expected-error-re(nvcc): no instance of function template "enqueue" matches
// unexpected-error-re: static assertion failed|static_assert failed
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_like.hpp>

template <streamlike::stream_like S>
void enqueue(S&& stream) {
  (void)streamlike::get_stream(static_cast<S&&>(stream));
}

void use(streamlike::shared_stream& named) {
  enqueue(named);
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  enqueue(streamlike::shared_stream::create());
#endif
}
