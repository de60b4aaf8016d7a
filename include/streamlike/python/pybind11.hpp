// streamlike/python/pybind11.hpp: pybind11 type casters for streamlike's stream types.
//
// Include it in the translation units that bind functions taking or returning streams:
//
//   #include <streamlike/python/pybind11.hpp>
//   void launch(streamlike::stream_view s);                  // any object with __cuda_stream__
//   void enqueue_later(streamlike::shared_stream s);         // ... kept alive while C++ holds it
//   streamlike::shared_stream make();                        // -> streamlike.Stream (owning)
//   PYBIND11_MODULE(ext, m) { m.def("launch", &launch); ... }
//
// Parameters:
//   stream_view               an object with __cuda_stream__ (torch, CuPy, cuda.core, numba-cuda,
//                             RMM streams, streamlike.Stream); a Python int is refused (TypeError).
//   shared_stream             the same objects; the shared_stream holds a strong reference to the
//                             object until its last C++ copy is dropped (from any thread: the GIL is
//                             taken; skipped while the interpreter finalizes). An owning
//                             streamlike.Stream of the type this module returns (the package's, or
//                             the module's own: see below) shares its owner: one atomic increment on
//                             the same count (C++ use_count() 2, Stream.use_count 1).
//                             Any other object with __cuda_stream_owned__ (a Stream of a type this
//                             module does not return, any producer of docs/owned-stream-abi.md)
//                             gives an owning reference through the capsule instead: a control block
//                             of this module's (C++ use_count() 1) holding one reference on the
//                             producer's count (Stream.use_count 2). That reference keeps no Python
//                             object of its own; what the producer's owner holds (for a Stream made
//                             from a Python object, that object) lives until it drops, and is
//                             released then under the GIL.
//   std::optional<...> of either (with <pybind11/stl.h>): None gives an empty optional.
//   streamlike::python::dlpack_stream, cai_stream
//                             None or an int in the DLPack / __cuda_array_interface__ convention,
//                             decoded into an optional view (integer_streams.hpp says the rules).
// Return values:
//   shared_stream             a streamlike.Stream that owns a reference (None if empty);
//   stream_view               a non-owning streamlike.Stream (the C++ side must keep the stream alive).
//   The type is looked up on first use (a stream returned, or stream_type() called): the streamlike
//   package's Stream where the package is importable and its layout matches, so every module and
//   the package share one Python type; else one made for this module (STREAMLIKE_PYTHON_LOCAL_TYPE=1
//   forces that). A module that takes shared_stream parameters should look it up at import, or a
//   Stream passed before it returned one takes the capsule route above. Exposing it at import does:
//     m.attr("Stream") = py::reinterpret_borrow<py::object>((PyObject*) streamlike::python::stream_type());
//
// Cost per call: a stream_view parameter costs about what an int parameter costs (pybind11's own
// call dominates), a shared_stream parameter a little more (it makes the block that holds the
// exporter, from Python's small-object heap); torch's handle is read without running its
// Python-level __cuda_stream__ and remembered by torch's key for the stream
// (docs/python-bridge.md, "Known exporters"). Without NDEBUG pybind11 checks that the GIL is held
// at each reference count change it makes, which costs more than the rest of the call: time a
// module built as a wheel builds it. The claim and its latest measurement: bench/RESULTS.md,
// "Python bridge".
//
// Errors are the protocol's (docs/python-bridge.md lists them); the exception raised inside
// __cuda_stream__ itself propagates unchanged. pybind11 lets a caster throw (its dispatcher and
// its container casters are exception-safe), so load() throws error_already_set with the Python
// exception.
//
// Overloads: an object without __cuda_stream__ is declined in pybind11's first (exact) pass of
// an overloaded function and raises the TypeError in the implicit-conversion pass, so an overload
// that matches exactly always wins, but one that needs an implicit conversion and is registered
// after the stream overload is not reached (nor a later std::variant alternative that needs one).
// Register stream overloads last, or mark the parameter py::arg("stream").noconvert() to get
// pybind11's own "incompatible function arguments" instead.
#ifndef STREAMLIKE_PYTHON_PYBIND11_HPP
#define STREAMLIKE_PYTHON_PYBIND11_HPP

#include <pybind11/pybind11.h>

#include <streamlike/python/detail/decode_integer.hpp>
#include <streamlike/python/detail/decode_stream.hpp>
#include <streamlike/python/detail/outcome.hpp>
#include <streamlike/python/detail/to_python.hpp>
#include <streamlike/python/integer_streams.hpp>
#include <streamlike/python/stream_type.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <type_traits>
#include <utility>

namespace streamlike::python::detail {

/// What the stream casters share: `decode` reads the argument into `value`; a failure throws
/// the Python exception.
template <class Value, auto decode>
class pb_caster_base {
public:
  bool load(pybind11::handle src, bool convert) {
    switch (decode(src.ptr(), convert, value)) {
      case outcome::ok: return true;
      case outcome::declined: return false;
      case outcome::failed: break;
    }
    throw pybind11::error_already_set();
  }

  template <typename T_>
  using cast_op_type = pybind11::detail::movable_cast_op_type<T_>;
  operator Value*() { return &value; }
  operator Value&() { return value; }
  operator Value&&() && { return std::move(value); }

protected:
  Value value = unread_value<Value>();
};

/// A new reference from to_python, or the Python exception thrown.
inline pybind11::handle pb_checked(PyObject* result) {
  if (result == nullptr) throw pybind11::error_already_set();
  return result;
}

} // namespace streamlike::python::detail

PYBIND11_NAMESPACE_BEGIN(PYBIND11_NAMESPACE)
PYBIND11_NAMESPACE_BEGIN(detail)

/// stream_view: read through __cuda_stream__; returned as a non-owning streamlike.Stream.
template <>
class type_caster<streamlike::stream_view>
    : public streamlike::python::detail::pb_caster_base<streamlike::stream_view,
                                                        &streamlike::python::detail::decode_view> {
public:
  static constexpr auto name = const_name("streamlike.CudaStreamLike");

  static handle cast(streamlike::stream_view view, return_value_policy, handle) {
    return streamlike::python::detail::pb_checked(streamlike::python::detail::to_python(view));
  }
  static handle cast(const streamlike::stream_view* view, return_value_policy policy, handle parent) {
    if (view == nullptr) return none().release();
    return cast(*view, policy, parent);
  }
};

/// shared_stream: read through __cuda_stream__, holding the exporter; returned as an owning
/// streamlike.Stream (None when empty).
template <>
class type_caster<streamlike::shared_stream>
    : public streamlike::python::detail::pb_caster_base<streamlike::shared_stream,
                                                        &streamlike::python::detail::decode_shared> {
public:
  static constexpr auto name = const_name("streamlike.CudaStreamLike");

  template <typename T_, enable_if_t<std::is_same<std::decay_t<T_>, streamlike::shared_stream>::value, int> = 0>
  static handle cast(T_&& stream, return_value_policy, handle) {
    return streamlike::python::detail::pb_checked(
        streamlike::python::detail::to_python(streamlike::shared_stream(std::forward<T_>(stream))));
  }
  static handle cast(const streamlike::shared_stream* stream, return_value_policy policy, handle parent) {
    if (stream == nullptr) return none().release();
    return cast(*stream, policy, parent);
  }
};

/// dlpack_stream: None or an int in the DLPack convention (argument only).
template <>
class type_caster<streamlike::python::dlpack_stream>
    : public streamlike::python::detail::pb_caster_base<streamlike::python::dlpack_stream,
                                                        &streamlike::python::detail::decode_dlpack> {
public:
  static constexpr auto name = const_name("int | None");
};

/// cai_stream: None or an int in the __cuda_array_interface__ convention (argument only).
template <>
class type_caster<streamlike::python::cai_stream>
    : public streamlike::python::detail::pb_caster_base<streamlike::python::cai_stream,
                                                        &streamlike::python::detail::decode_cai> {
public:
  static constexpr auto name = const_name("int | None");
};

PYBIND11_NAMESPACE_END(detail)
PYBIND11_NAMESPACE_END(PYBIND11_NAMESPACE)

#endif // STREAMLIKE_PYTHON_PYBIND11_HPP
