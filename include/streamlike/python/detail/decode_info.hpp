// streamlike/python/detail/decode_info.hpp: reading the (version, address) that __cuda_stream__
// returned into a stream_view. Problems are returned as a decode_status, reported by the caller
// that holds the argument (decode_problem.hpp).
#ifndef STREAMLIKE_PYTHON_DETAIL_DECODE_INFO_HPP
#define STREAMLIKE_PYTHON_DETAIL_DECODE_INFO_HPP

#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/decode_problem.hpp>
#include <streamlike/python/detail/translate_exceptions.hpp>
#include <streamlike/stream_encodings.hpp>
#include <streamlike/stream_view.hpp>

#include <cstdint>

namespace streamlike::python::detail {

/// Reads one element of the protocol's tuple (borrowed) as a C long long, with `overflow` as
/// PyLong_AsLongLongAndOverflow sets it. Accepts int and objects with __index__ (numpy integers);
/// a bool is an int in Python and passes. Anything else is `not_an_int`.
[[nodiscard]] inline decode_status read_integer(PyObject* item, problem not_an_int, long long& value,
                                                int& overflow) noexcept {
  scoped_ref index;
  if (PyLong_Check(item)) {
    index = scoped_ref::borrow(item);
  } else if (PyIndex_Check(item)) {
    index = scoped_ref::steal(PyNumber_Index(item));
    if (!index) return decode_status::python_error();
  } else {
    return decode_status::wrong(not_an_int, item);
  }
  value = PyLong_AsLongLongAndOverflow(index.get(), &overflow);
  if (value == -1 && overflow == 0 && PyErr_Occurred() != nullptr) return decode_status::python_error();
  return decode_status::read();
}

/// Decodes the address element of (0, address) (borrowed); (0, 0) is the legacy default stream.
[[nodiscard]] inline decode_status decode_address(PyObject* address_item, stream_view& out) noexcept {
  long long address = 0;
  int overflow = 0;
  if (PyLong_CheckExact(address_item)) { // the common case, a stream handle: no reference, no error possible
    address = PyLong_AsLongLongAndOverflow(address_item, &overflow);
    if (overflow == 0 && address > 0) {
      out = streamlike::detail::view_of_address(static_cast<std::uint64_t>(address)); // as from_cuda_stream_protocol
      return decode_status::read();
    }
  }
  if (decode_status s = read_integer(address_item, problem::address_not_an_int, address, overflow); !s.ok()) return s;
  if (overflow < 0 || (overflow == 0 && address < 0)) {
    return decode_status::wrong(problem::negative_address, address_item);
  }
  if (overflow > 0) return decode_status::wrong(problem::address_beyond_63_bits, address_item);
  return translate_exceptions(decode_status::python_error(), [&] {
    out = streamlike::from_cuda_stream_protocol(0, static_cast<std::int64_t>(address));
    return decode_status::read();
  });
}

/// Decodes the (version, address) that __cuda_stream__ produced (a new reference, consumed).
[[nodiscard]] inline decode_status decode_info(scoped_ref info, stream_view& out) noexcept {
  PyObject* sequence = info.get();
  PyObject* version_item = nullptr;
  PyObject* address_item = nullptr;
  scoped_ref version_ref;
  scoped_ref address_ref;
  if (PyTuple_CheckExact(sequence) && PyTuple_GET_SIZE(sequence) == 2) { // the common case: borrowed items
    version_item = PyTuple_GET_ITEM(sequence, 0);
    address_item = PyTuple_GET_ITEM(sequence, 1);
  } else {
    if (!PySequence_Check(sequence) || PyUnicode_Check(sequence) || PyBytes_Check(sequence)) {
      return decode_status::wrong(problem::not_a_sequence, sequence);
    }
    const Py_ssize_t size = PySequence_Size(sequence);
    if (size < 0) return decode_status::python_error();
    if (size != 2) return decode_status::wrong(problem::wrong_length, sequence, size);
    version_ref = scoped_ref::steal(PySequence_GetItem(sequence, 0));
    if (!version_ref) return decode_status::python_error();
    address_ref = scoped_ref::steal(PySequence_GetItem(sequence, 1));
    if (!address_ref) return decode_status::python_error();
    version_item = version_ref.get();
    address_item = address_ref.get();
  }

  long long version = 0;
  int overflow = 0;
  if (decode_status s = read_integer(version_item, problem::version_not_an_int, version, overflow); !s.ok()) return s;
  if (overflow != 0 || version != 0) return decode_status::wrong(problem::unsupported_version, version_item);
  return decode_address(address_item, out);
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_DECODE_INFO_HPP
