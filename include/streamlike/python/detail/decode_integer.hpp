// streamlike/python/detail/decode_integer.hpp: dlpack_stream and cai_stream arguments: None or an
// int, decoded in the convention the parameter type names (streamlike/stream_encodings.hpp).
#ifndef STREAMLIKE_PYTHON_DETAIL_DECODE_INTEGER_HPP
#define STREAMLIKE_PYTHON_DETAIL_DECODE_INTEGER_HPP

#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/outcome.hpp>
#include <streamlike/python/detail/translate_exceptions.hpp>
#include <streamlike/python/integer_streams.hpp>
#include <streamlike/stream_encodings.hpp>
#include <streamlike/stream_view.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace streamlike::python::detail {

/// What reading None or an int found wrong.
enum class integer_problem : unsigned char {
  none,           // read (None: an empty value)
  python_error,   // a Python exception is set
  not_an_int,     // neither None nor an int (a bool is refused: True is not a stream)
  beyond_64_bits, // an int outside the int64 range
};

struct integer_read {
  integer_problem what = integer_problem::none;
  std::optional<std::int64_t> value;
};

[[nodiscard]] inline integer_read read_stream_integer(PyObject* obj) noexcept {
  if (obj == Py_None) return {};
  if (!PyLong_Check(obj) || PyBool_Check(obj)) return {integer_problem::not_an_int, std::nullopt};
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (value == -1 && overflow == 0 && PyErr_Occurred() != nullptr) return {integer_problem::python_error, std::nullopt};
  if (overflow != 0) return {integer_problem::beyond_64_bits, std::nullopt};
  return {integer_problem::none, static_cast<std::int64_t>(value)};
}

/// The argument `obj` of a parameter of type Stream (dlpack_stream, cai_stream), decoded by
/// `decode` (which throws std::invalid_argument, raised as ValueError, for a value the convention
/// disallows); `convention` names it in messages. Declines a non-integer before the binding's
/// implicit-conversion pass (`convert` false).
template <class Stream, auto decode>
[[nodiscard]] outcome decode_integer_stream(PyObject* obj, bool convert, const char* convention, Stream& out) noexcept {
  const integer_read read = read_stream_integer(obj);
  if (read.what == integer_problem::python_error) return outcome::failed;
  if (read.what == integer_problem::not_an_int && !convert) return outcome::declined;
  return translate_exceptions(outcome::failed, [&] {
    switch (read.what) {
      case integer_problem::not_an_int:
        PyErr_SetString(PyExc_TypeError,
                        (std::string("streamlike: expected a ") + convention +
                         " stream integer (an int or None), got an object of type '" + type_name(obj) + "'")
                            .c_str());
        return outcome::failed;
      case integer_problem::beyond_64_bits:
        PyErr_SetString(PyExc_ValueError, (std::string("streamlike: ") + convention +
                                           ": invalid stream value (out of the 64-bit range); expected a stream handle")
                                              .c_str());
        return outcome::failed;
      case integer_problem::none:
      case integer_problem::python_error: break;
    }
    out.view = decode(read.value);
    return outcome::ok;
  });
}

/// The dlpack_stream argument `obj` (streamlike::from_dlpack_stream).
[[nodiscard]] inline outcome decode_dlpack(PyObject* obj, bool convert, dlpack_stream& out) noexcept {
  return decode_integer_stream<dlpack_stream, &streamlike::from_dlpack_stream>(obj, convert,
                                                                               "DLPack __dlpack__(stream=)", out);
}

/// The cai_stream argument `obj` (streamlike::from_cuda_array_interface_stream).
[[nodiscard]] inline outcome decode_cai(PyObject* obj, bool convert, cai_stream& out) noexcept {
  return decode_integer_stream<cai_stream, &streamlike::from_cuda_array_interface_stream>(
      obj, convert, "__cuda_array_interface__ \"stream\"", out);
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_DECODE_INTEGER_HPP
