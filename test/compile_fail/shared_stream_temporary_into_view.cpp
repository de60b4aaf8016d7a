// Promise: `stream_view v = shared_stream::create();` does not compile, and the refusal names
// export_stream and what to write instead: the temporary may hold the last reference, so the view
// would dangle. g++ and nvcc name the deleted conversion by its class; clang++ names no class, and
// shows the declaration, whose line says it. A named shared_stream converts.
// expected-error-re(g++): use of deleted function '[^']*temporary_owner_has_no_view_name_it_or_call_export_stream_std_move_owner::operator streamlike::stream_view\(\) &&'
// expected-error-re(nvcc): temporary_owner_has_no_view_name_it_or_call_export_stream_std_move_owner::operator streamlike::stream_view\(\) &&" .*cannot be referenced -- it is a deleted function
// expected-error-re(clang++): conversion function from 'streamlike::shared_stream' to 'streamlike::stream_view' invokes a deleted function
// expected-error-re(clang++): would dangle: name the owner, or export_stream\(std::move\(owner\)\)
#include <streamlike/shared_stream.hpp>

void use(const streamlike::shared_stream& named) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::stream_view v = streamlike::shared_stream::create();
#else
  streamlike::stream_view v = named;
#endif
  (void)v;
  (void)named;
}
