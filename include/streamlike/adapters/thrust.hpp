// streamlike/adapters/thrust.hpp: Thrust's CUDA execution policies bound to a stream.
//
// `thrust::cuda::par.on(s)`, `thrust::cuda::par_nosync.on(s)`, the allocator-aware forms
// (`par(alloc).on(s)`) and types derived from them (such as rmm::exec_policy) are stream_like:
// get_stream yields the stream the policy runs its algorithms on. Thrust's own customization point
// (the hidden friend get_stream of cuda_cub::execute_on_stream_base and
// execute_on_stream_nosync_base, found by argument-dependent lookup) answers, so a policy keeps
// meaning what Thrust says it means.
//
// A policy that is not bound to a stream (plain `thrust::cuda::par`, `thrust::device`) is not
// stream_like: Thrust runs it on the default stream of the translation unit that calls the
// algorithm, which is exactly the implicit choice streamlike makes callers spell out
// (stream_view::legacy_default() or per_thread_default()).
//
// Thrust's CUDA system needs a CUDA compiler: include this header from .cu files (nvcc or clang -x cuda).
// Include it in every translation unit that hands such a policy to streamlike.
#ifndef STREAMLIKE_ADAPTERS_THRUST_HPP
#define STREAMLIKE_ADAPTERS_THRUST_HPP

#include <streamlike/get_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <thrust/system/cuda/execution_policy.h>

#include <type_traits>

// Outside namespace streamlike on purpose: there, the name get_stream would find the
// customization point object streamlike::get_stream, and an object found by ordinary lookup
// switches argument-dependent lookup off, so Thrust's hidden friend would never be seen.
namespace streamlike_thrust_adl {

template <class Derived>
std::true_type bound_to_stream(const thrust::cuda_cub::execute_on_stream_base<Derived>*);
template <class Derived>
std::true_type bound_to_stream(const thrust::cuda_cub::execute_on_stream_nosync_base<Derived>*);
std::false_type bound_to_stream(const void*);

/// Thrust's answer: the hidden friend get_stream of the policy's stream-carrying base.
template <class Policy>
cudaStream_t stream_of(const Policy& policy) noexcept {
  return get_stream(policy);
}

} // namespace streamlike_thrust_adl

namespace streamlike {
namespace adapters::thrust {

/// A Thrust CUDA execution policy that carries a stream: derived from
/// thrust::cuda_cub::execute_on_stream_base or execute_on_stream_nosync_base.
template <class Policy>
concept stream_bound_policy =
    decltype(streamlike_thrust_adl::bound_to_stream(static_cast<const std::remove_cvref_t<Policy>*>(nullptr)))::value;

} // namespace adapters::thrust

/// get_stream of a stream-bound Thrust policy: the stream Thrust would run it on.
// clang-format 14 would join this requires-clause with the declaration after it.
// clang-format off
template <class Policy>
  requires adapters::thrust::stream_bound_policy<Policy>
stream_view tag_invoke(get_stream_t, const Policy& policy) noexcept {
  return stream_view{streamlike_thrust_adl::stream_of(policy)};
}
// clang-format on

} // namespace streamlike

#endif // STREAMLIKE_ADAPTERS_THRUST_HPP
