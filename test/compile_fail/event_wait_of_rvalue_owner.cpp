// Promise: wait(stream, event) and wait_external(stream, event) do not take a temporary stream
// owner: the owner would destroy its stream at the end of the statement, with the wait queued on
// it. The templates' stream_like constraint leaves only the stream_view overloads, and the owner's
// deleted rvalue conversion to stream_view refuses those (as for any call taking a view).
// expected-error-re: event_wait_of_rvalue_owner\.cpp:15:[0-9]+: error: (use of deleted function .streamlike::(unique_stream|detail::temporary_owner_has_no_view_name_it_or_call_export_stream_std_move_owner)::operator streamlike::stream_view\(\) &&|conversion function from 'streamlike::unique_stream' to 'streamlike::stream_view' invokes a deleted function)
// expected-error-re: event_wait_of_rvalue_owner\.cpp:16:[0-9]+: error: (use of deleted function .streamlike::(unique_stream|detail::temporary_owner_has_no_view_name_it_or_call_export_stream_std_move_owner)::operator streamlike::stream_view\(\) &&|conversion function from 'streamlike::unique_stream' to 'streamlike::stream_view' invokes a deleted function)
// unexpected-error-re: ambiguous
#include <streamlike/event.hpp>
#include <streamlike/unique_stream.hpp>

void use(const streamlike::unique_stream& named, const streamlike::event& e) {
  streamlike::wait(named, e); // a named owner is fine
  streamlike::wait_external(named, e);
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::wait(streamlike::unique_stream{}, e);
  streamlike::wait_external(streamlike::unique_stream{}, e);
#endif
}
