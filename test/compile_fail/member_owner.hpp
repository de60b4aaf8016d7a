// test/compile_fail/member_owner.hpp: a user's stream owner (enable_stream_owner is true) that
// get_stream reaches through its get_stream() member: the type the promises about temporary owners
// are made of.
#ifndef STREAMLIKE_TEST_COMPILE_FAIL_MEMBER_OWNER_HPP
#define STREAMLIKE_TEST_COMPILE_FAIL_MEMBER_OWNER_HPP

#include <streamlike/get_stream.hpp>

namespace user {
struct owner {
  cudaStream_t handle{};
  cudaStream_t get_stream() const noexcept { return handle; }
};
} // namespace user

template <>
inline constexpr bool streamlike::enable_stream_owner<user::owner> = true;

#endif // STREAMLIKE_TEST_COMPILE_FAIL_MEMBER_OWNER_HPP
