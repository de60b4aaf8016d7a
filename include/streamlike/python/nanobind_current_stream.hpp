// streamlike/python/nanobind_current_stream.hpp: the nanobind caster of stream_or_current
// (streamlike/python/stream_or_current.hpp): None or streamlike.CURRENT give the caller's current
// stream, any stream object gives its stream. Bind the parameter with nb::arg("stream") = nb::none()
// so that leaving it out means the current stream.
#ifndef STREAMLIKE_PYTHON_NANOBIND_CURRENT_STREAM_HPP
#define STREAMLIKE_PYTHON_NANOBIND_CURRENT_STREAM_HPP

#include <streamlike/python/stream_or_current.hpp>
#include <streamlike/python/nanobind.hpp>

NAMESPACE_BEGIN(NB_NAMESPACE)
NAMESPACE_BEGIN(detail)

template <>
struct type_caster<streamlike::python::stream_or_current>
    : streamlike::python::detail::nb_caster_base<streamlike::python::stream_or_current,
                                                 &streamlike::python::detail::decode_stream_or_current> {
  static constexpr auto Name = const_name("streamlike.CudaStreamLike | None");
};

#if NB_VERSION_MAJOR >= 3
// None is a value: the current stream.
template <>
struct has_arg_defaults<streamlike::python::stream_or_current> : std::true_type {};
#endif

NAMESPACE_END(detail)
NAMESPACE_END(NB_NAMESPACE)

#endif // STREAMLIKE_PYTHON_NANOBIND_CURRENT_STREAM_HPP
