// Promise: a temporary owner does not convert to cuda::stream_ref or stream_view: the temporary
// may hold the last reference (a shared_stream) or destroy its stream (a unique_stream) at the end
// of the full expression, so the view would dangle. An lvalue owner converts.
// Each error names the deleted rvalue conversion (g++: the function, by the class that says to
// call export_stream; clang++: the conversion).
// expected-error-re: use of deleted function 'streamlike::detail::temporary_owner_has_no_view_name_it_or_call_export_stream_std_move_owner::operator cuda::[^']*stream_ref\(\) (const )?&&'|conversion function from 'streamlike::shared_stream' to 'cuda::stream_ref' invokes a deleted function
// expected-error-re: use of deleted function 'streamlike::detail::temporary_owner_has_no_view_name_it_or_call_export_stream_std_move_owner::operator streamlike::stream_view\(\) (const )?&&'|conversion function from 'streamlike::unique_stream' to 'streamlike::stream_view' invokes a deleted function
#include <streamlike/shared_stream.hpp>
#include <streamlike/unique_stream.hpp>

void take_ref(cuda::stream_ref);
void take_view(streamlike::stream_view);

void use(const streamlike::shared_stream& shared, const streamlike::unique_stream& unique) {
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  take_ref(streamlike::shared_stream::create());
  take_view(streamlike::unique_stream::create());
#else
  take_ref(shared);
  take_view(unique);
#endif
}
