// streamlike/python/nanobind.hpp: nanobind type casters for streamlike's stream types.
//
// Include it in the translation units that bind functions taking or returning streams:
//
//   #include <streamlike/python/nanobind.hpp>
//   void launch(streamlike::stream_view s);                  // any object with __cuda_stream__
//   void enqueue_later(streamlike::shared_stream s);         // ... kept alive while C++ holds it
//   streamlike::shared_stream make();                        // -> streamlike.Stream (owning)
//   NB_MODULE(ext, m) { m.def("launch", &launch); ... }
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
//   std::optional<stream_view>, std::optional<shared_stream>
//                             as above, and None gives an empty optional.
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
//     m.attr("Stream") = nb::borrow((PyObject*) streamlike::python::stream_type());
//
// Cost per call: a stream_view parameter adds little to the binding's own call with an int
// argument; a shared_stream parameter also makes the block that holds the exporter, from Python's
// small-object heap. torch's handle is read without running its Python-level __cuda_stream__ and
// remembered by torch's key for the stream (docs/python-bridge.md, "Known exporters"). The claim
// and its latest measurement: bench/RESULTS.md, "Python bridge".
//
// Errors are the protocol's (docs/python-bridge.md lists them): the exception raised inside
// __cuda_stream__ itself propagates unchanged. How they reach Python with nanobind: its type
// casters report failure by returning false, and its container casters (std::optional, lists,
// std::variant, ...) call them from noexcept functions, where an exception would terminate the
// process. So from_python never throws: it keeps the Python exception and reports success;
// can_cast() then answers false, which makes a container caster treat the argument as not
// matching (nanobind's own TypeError), and the cast operator, which nanobind's dispatcher calls
// for a top-level argument inside its try block, raises the kept exception. The std::optional
// casters below are specialized so that an optional stream parameter raises the same errors.
//
// Overloads: an object without __cuda_stream__ is declined in nanobind's first (exact) pass and
// raises the TypeError in the implicit-conversion pass, so an overload that matches exactly
// always wins, but one that needs an implicit conversion and is registered after the stream
// overload is not reached. Register stream overloads last, or mark the parameter
// nb::arg("stream").noconvert() to get nanobind's own "incompatible function arguments" instead.
#ifndef STREAMLIKE_PYTHON_NANOBIND_HPP
#define STREAMLIKE_PYTHON_NANOBIND_HPP

#include <nanobind/nanobind.h>

#include <streamlike/python/detail/decode_integer.hpp>
#include <streamlike/python/detail/decode_stream.hpp>
#include <streamlike/python/detail/outcome.hpp>
#include <streamlike/python/detail/saved_error.hpp>
#include <streamlike/python/detail/to_python.hpp>
#include <streamlike/python/integer_streams.hpp>
#include <streamlike/python/stream_type.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

namespace streamlike::python::detail {

/// A protocol error kept by a nanobind caster until nanobind asks for the value (header comment).
class nb_pending_error {
public:
  [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(error_); }
  void keep_current() noexcept { error_ = saved_error::fetch(); }
  /// Raises the kept exception as a nanobind::python_error, which carries it unchanged.
  void raise_if_pending() {
    if (error_) {
      error_.restore();
      throw nanobind::python_error();
    }
  }

private:
  saved_error error_;
};

[[nodiscard]] constexpr bool nb_convert(std::uint32_t flags) noexcept {
  return (flags & static_cast<std::uint32_t>(nanobind::detail::cast_flags::convert)) != 0;
}

/// What the stream casters share: `decode` reads the argument into `value`; a failure is kept
/// and raised by the cast operators (header comment), so from_python never throws.
template <class Value, auto decode>
struct nb_caster_base {
  template <typename T_>
  using Cast = nanobind::detail::movable_cast_t<T_>;

  bool from_python(nanobind::handle src, std::uint32_t flags, nanobind::detail::cleanup_list*) noexcept {
    switch (decode(src.ptr(), nb_convert(flags), value)) {
      case outcome::ok: return true;
      case outcome::declined: return false;
      case outcome::failed: break;
    }
    pending.keep_current();
    return true; // nanobind asks can_cast() (containers) or the cast operator (arguments) next
  }

  template <typename T_>
  bool can_cast() const noexcept {
    return !pending;
  }
  explicit operator Value*() {
    pending.raise_if_pending();
    return &value;
  }
  explicit operator Value&() {
    pending.raise_if_pending();
    return value;
  }
  explicit operator Value&&() {
    pending.raise_if_pending();
    return std::move(value);
  }

  Value value = unread_value<Value>();
  nb_pending_error pending;
};

/// std::optional of a stream type: None is empty; anything else goes through the stream type's
/// caster, with its errors (nanobind's generic std::optional caster would turn them into "no match").
template <class Stream, auto decode>
inline outcome decode_optional(PyObject* obj, bool convert, std::optional<Stream>& out) noexcept {
  if (obj == Py_None) {
    out.reset();
    return outcome::ok;
  }
  Stream value = unread_value<Stream>();
  const outcome o = decode(obj, convert, value);
  if (o == outcome::ok) out.emplace(std::move(value));
  return o;
}

} // namespace streamlike::python::detail

NAMESPACE_BEGIN(NB_NAMESPACE)
NAMESPACE_BEGIN(detail)

/// stream_view: read through __cuda_stream__; returned as a non-owning streamlike.Stream.
template <>
struct type_caster<streamlike::stream_view>
    : streamlike::python::detail::nb_caster_base<streamlike::stream_view, &streamlike::python::detail::decode_view> {
  using Value = streamlike::stream_view;
  static constexpr auto Name = const_name("streamlike.CudaStreamLike");

  static handle from_cpp(Value view, rv_policy, cleanup_list*) noexcept {
    return streamlike::python::detail::to_python(view);
  }
  static handle from_cpp(const Value* view, rv_policy policy, cleanup_list* cleanup) noexcept {
    if (view == nullptr) return none().release();
    return from_cpp(*view, policy, cleanup);
  }
};

/// shared_stream: read through __cuda_stream__, holding the exporter; returned as an owning
/// streamlike.Stream (None when empty).
template <>
struct type_caster<streamlike::shared_stream>
    : streamlike::python::detail::nb_caster_base<streamlike::shared_stream,
                                                 &streamlike::python::detail::decode_shared> {
  using Value = streamlike::shared_stream;
  static constexpr auto Name = const_name("streamlike.CudaStreamLike");

  template <typename T_, std::enable_if_t<std::is_same_v<std::decay_t<T_>, Value>, int> = 0>
  static handle from_cpp(T_&& stream, rv_policy, cleanup_list*) noexcept {
    return streamlike::python::detail::to_python(Value(std::forward<T_>(stream)));
  }
  static handle from_cpp(const Value* stream, rv_policy policy, cleanup_list* cleanup) noexcept {
    if (stream == nullptr) return none().release();
    return from_cpp(*stream, policy, cleanup);
  }
};

#if NB_VERSION_MAJOR >= 3
// nanobind 3 passes None to a parameter only if its type says it accepts None, as
// <nanobind/stl/optional.h> says for std::optional (nanobind 2 needs nb::arg("s").none() for
// these parameters).
template <>
struct has_arg_defaults<std::optional<streamlike::stream_view>> : std::true_type {};
template <>
struct has_arg_defaults<std::optional<streamlike::shared_stream>> : std::true_type {};
// None is a value of both integer conventions (the legacy default stream; no synchronization).
template <>
struct has_arg_defaults<streamlike::python::dlpack_stream> : std::true_type {};
template <>
struct has_arg_defaults<streamlike::python::cai_stream> : std::true_type {};
#endif

/// std::optional<stream_view>: None or a stream (returned: None or a non-owning streamlike.Stream).
template <>
struct type_caster<std::optional<streamlike::stream_view>>
    : streamlike::python::detail::nb_caster_base<
          std::optional<streamlike::stream_view>,
          &streamlike::python::detail::decode_optional<streamlike::stream_view,
                                                       &streamlike::python::detail::decode_view>> {
  using Value = std::optional<streamlike::stream_view>;
  static constexpr auto Name = const_name("streamlike.CudaStreamLike | None");

  static handle from_cpp(const Value& view, rv_policy policy, cleanup_list* cleanup) noexcept {
    if (!view) return none().release();
    return type_caster<streamlike::stream_view>::from_cpp(*view, policy, cleanup);
  }
};

/// std::optional<shared_stream>: None or a stream held as the shared_stream parameter holds it.
template <>
struct type_caster<std::optional<streamlike::shared_stream>>
    : streamlike::python::detail::nb_caster_base<
          std::optional<streamlike::shared_stream>,
          &streamlike::python::detail::decode_optional<streamlike::shared_stream,
                                                       &streamlike::python::detail::decode_shared>> {
  using Value = std::optional<streamlike::shared_stream>;
  static constexpr auto Name = const_name("streamlike.CudaStreamLike | None");

  template <typename T_, std::enable_if_t<std::is_same_v<std::decay_t<T_>, Value>, int> = 0>
  static handle from_cpp(T_&& stream, rv_policy policy, cleanup_list* cleanup) noexcept {
    if (!stream) return none().release();
    return type_caster<streamlike::shared_stream>::from_cpp(*std::forward<T_>(stream), policy, cleanup);
  }
};

/// dlpack_stream: None or an int in the DLPack convention (argument only).
template <>
struct type_caster<streamlike::python::dlpack_stream>
    : streamlike::python::detail::nb_caster_base<streamlike::python::dlpack_stream,
                                                 &streamlike::python::detail::decode_dlpack> {
  static constexpr auto Name = const_name("int | None");
};

/// cai_stream: None or an int in the __cuda_array_interface__ convention (argument only).
template <>
struct type_caster<streamlike::python::cai_stream>
    : streamlike::python::detail::nb_caster_base<streamlike::python::cai_stream,
                                                 &streamlike::python::detail::decode_cai> {
  static constexpr auto Name = const_name("int | None");
};

NAMESPACE_END(detail)
NAMESPACE_END(NB_NAMESPACE)

#endif // STREAMLIKE_PYTHON_NANOBIND_HPP
