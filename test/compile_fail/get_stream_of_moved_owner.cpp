// Promise: get_stream(std::move(owner)) (an xvalue, not only a prvalue) does not compile either:
// the owner is about to be given away, so a view of it would dangle; export_stream is the way.
// expected-error-re: view would dangle
// expected-error-re: export_stream\(std::move\(owner\)\)
#include <streamlike/get_stream.hpp>

#include <utility>

namespace user {
struct owner {
  cudaStream_t handle{};
  friend cudaStream_t tag_invoke(streamlike::get_stream_t, const owner& self) noexcept { return self.handle; }
};
} // namespace user

template <>
inline constexpr bool streamlike::enable_stream_owner<user::owner> = true;

void use() {
  user::owner named;
  (void)streamlike::get_stream(named); // the tag_invoke route serves the lvalue
#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL
  streamlike::get_stream(std::move(named));
#endif
}
