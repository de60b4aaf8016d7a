// Promise: `view == nullptr` (either way round) does not compile: a view is never "null", and the
// null handle is the ambiguous default stream 0. The refusal is the deleted
// operator==(stream_view, std::nullptr_t); without it nullptr would become a null cudaStream_t.
// expected-error-re: use of deleted function 'bool streamlike::operator==\(stream_view, std::nullptr_t\)'|overload resolution selected deleted operator '=='\n[^\n]*\n[^\n]*\n[^\n]*note: candidate function \(with reversed parameter order\) has been explicitly deleted\n\s*friend bool operator==\(stream_view, std::nullptr_t\) = delete
// unexpected-error-re: ambiguous
#include <streamlike/stream_view.hpp>

bool use(streamlike::stream_view view) {
  bool same = view == cudaStream_t{}; // an explicit handle is fine
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  same = nullptr == view;
#endif
  return same;
}
