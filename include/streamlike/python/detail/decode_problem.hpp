// streamlike/python/detail/decode_problem.hpp: what was wrong with a stream argument, as data.
// The decoders find a problem deep inside what an object returned (one element of a tuple), but
// the message names the type of the argument itself; so they return a decode_status, and the
// caster's entry point, which holds the argument, turns it into the Python exception once
// (report). The messages are the protocol's (docs/python-bridge.md, "Reading a stream").
#ifndef STREAMLIKE_PYTHON_DETAIL_DECODE_PROBLEM_HPP
#define STREAMLIKE_PYTHON_DETAIL_DECODE_PROBLEM_HPP

#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/outcome.hpp>
#include <streamlike/python/detail/translate_exceptions.hpp>

#include <string>

namespace streamlike::python::detail {

/// What reading a stream through __cuda_stream__ found wrong.
enum class problem : unsigned char {
  none,                   // nothing: the stream was read
  python_error,           // a Python exception is set (raised by the object's own code, or MemoryError)
  no_protocol,            // no __cuda_stream__, or __cuda_stream__ = None
  not_a_sequence,         // __cuda_stream__ returned `culprit`, which is not a sequence
  wrong_length,           // ... a sequence of `length` elements, not 2
  version_not_an_int,     // the version, `culprit`, is not an integer
  address_not_an_int,     // the address, `culprit`, is not an integer
  unsupported_version,    // the version, `culprit`, is not 0
  negative_address,       // the address, `culprit`, is negative
  address_beyond_63_bits, // the address is 2**63 or more
};

/// A problem (or none) and the value it is about.
struct [[nodiscard]] decode_status {
  problem what = problem::none;
  scoped_ref culprit;    // a strong reference: the sequence it came from may be released before the report
  Py_ssize_t length = 0; // wrong_length: the sequence's length

  [[nodiscard]] bool ok() const noexcept { return what == problem::none; }

  [[nodiscard]] static decode_status read() noexcept { return {}; }
  /// A Python exception is set: report() raises it unchanged.
  [[nodiscard]] static decode_status python_error() noexcept { return {problem::python_error, {}, 0}; }
  /// `culprit` is borrowed (a new reference is taken).
  [[nodiscard]] static decode_status wrong(problem p, PyObject* culprit = nullptr, Py_ssize_t length = 0) noexcept {
    return {p, scoped_ref::borrow(culprit), length};
  }
};

/// repr(item) for a message: false, with repr's exception set, if repr() itself raised.
[[nodiscard]] inline bool repr_text(PyObject* item, std::string& shown) {
  const scoped_ref repr = scoped_ref::steal(PyObject_Repr(item));
  if (!repr) return false;
  const char* text = PyUnicode_AsUTF8(repr.get());
  if (text == nullptr) PyErr_Clear();
  shown = text != nullptr ? text : "?";
  return true;
}

/// Sets the Python exception for `status` (not none, not python_error) about the argument `obj`.
/// Throws std::bad_alloc if a message cannot be built.
inline void set_problem_error(PyObject* obj, const decode_status& status) {
  const std::string method = std::string("streamlike: ") + type_name(obj) + ".__cuda_stream__";
  const std::string sequence_expected = method + " must return a sequence of 2 ints (version, address), got ";
  PyObject* culprit = status.culprit.get();
  PyObject* type = PyExc_ValueError;
  std::string message;
  std::string shown; // repr(culprit)
  switch (status.what) {
    case problem::none:
    case problem::python_error: return;
    case problem::no_protocol:
      type = PyExc_TypeError;
      message = std::string("streamlike: expected a CUDA stream: an object with a __cuda_stream__() method returning "
                            "(0, address) (the CUDA Stream Protocol, as torch, CuPy, cuda.core and numba-cuda streams "
                            "implement it); got an object of type '") +
                type_name(obj) + "', which has no __cuda_stream__";
      if (PyLong_Check(obj)) {
        message += ". A Python int is not a stream: which stream 0, 1 or 2 names depends on the convention it was "
                   "written in (DLPack, __cuda_array_interface__, the CUDA runtime); pass the stream object itself";
      }
      break;
    case problem::not_a_sequence:
      type = PyExc_TypeError;
      message = sequence_expected + "an object of type '" + type_name(culprit) + "'";
      break;
    case problem::wrong_length: message = sequence_expected + std::to_string(status.length) + " element(s)"; break;
    case problem::version_not_an_int:
    case problem::address_not_an_int:
      type = PyExc_TypeError;
      message = method + "() returned a " +
                (status.what == problem::version_not_an_int ? "version" : "stream address") + " of type '" +
                type_name(culprit) + "'; expected an int, as in (0, address)";
      break;
    case problem::unsupported_version:
    case problem::negative_address:
      if (!repr_text(culprit, shown)) return;
      message = status.what == problem::unsupported_version
                    ? method + " returned protocol version " + shown + "; only version 0 is defined, as in (0, address)"
                    : method + " returned the negative stream address " + shown +
                          "; expected a cudaStream_t address >= 0 (0: the legacy default stream)";
      break;
    case problem::address_beyond_63_bits:
      message = method + " returned a stream address beyond 2**63 - 1; expected a cudaStream_t address";
      break;
  }
  PyErr_SetString(type, message.c_str());
}

/// The caster's answer for the argument `obj`, which was read with `status`: ok if it was read;
/// declined (no exception set) for a missing __cuda_stream__ before the binding's implicit-
/// conversion pass (`convert` false), so that other overloads can match exactly first; otherwise
/// failed, with the Python exception set (the one already raised, or the problem's message).
[[nodiscard]] inline outcome report(PyObject* obj, bool convert, const decode_status& status) noexcept {
  switch (status.what) {
    case problem::none: return outcome::ok;
    case problem::python_error: return outcome::failed;
    case problem::no_protocol:
      if (!convert) return outcome::declined;
      break;
    default: break;
  }
  return translate_exceptions(outcome::failed, [&] {
    set_problem_error(obj, status);
    return outcome::failed;
  });
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_DECODE_PROBLEM_HPP
