// streamlike/python/pybind11_current_stream.hpp: the pybind11 caster of stream_or_current
// (streamlike/python/stream_or_current.hpp): None or streamlike.CURRENT give the caller's current
// stream, any stream object gives its stream. Bind the parameter with py::arg("stream") = py::none()
// so that leaving it out means the current stream.
#ifndef STREAMLIKE_PYTHON_PYBIND11_CURRENT_STREAM_HPP
#define STREAMLIKE_PYTHON_PYBIND11_CURRENT_STREAM_HPP

#include <streamlike/python/stream_or_current.hpp>
#include <streamlike/python/pybind11.hpp>

PYBIND11_NAMESPACE_BEGIN(PYBIND11_NAMESPACE)
PYBIND11_NAMESPACE_BEGIN(detail)

template <>
class type_caster<streamlike::python::stream_or_current>
    : public streamlike::python::detail::pb_caster_base<streamlike::python::stream_or_current,
                                                        &streamlike::python::detail::decode_stream_or_current> {
public:
  static constexpr auto name = const_name("streamlike.CudaStreamLike | None");
};

PYBIND11_NAMESPACE_END(detail)
PYBIND11_NAMESPACE_END(PYBIND11_NAMESPACE)

#endif // STREAMLIKE_PYTHON_PYBIND11_CURRENT_STREAM_HPP
