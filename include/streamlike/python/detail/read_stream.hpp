// streamlike/python/detail/read_stream.hpp: the one reader of a Python stream object, for the
// casters and the package alike: it reads the stream's handle and says which way it read it
// (docs/python-bridge.md, "Reading a stream from Python"). Problems come back as a decode_status,
// reported by the caller that holds the argument (decode_problem.hpp).
#ifndef STREAMLIKE_PYTHON_DETAIL_READ_STREAM_HPP
#define STREAMLIKE_PYTHON_DETAIL_READ_STREAM_HPP

#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/decode_info.hpp>
#include <streamlike/python/detail/decode_problem.hpp>
#include <streamlike/python/detail/known_exporters.hpp>
#include <streamlike/python/detail/package_api.hpp>
#include <streamlike/python/detail/saved_error.hpp>
#include <streamlike/python/detail/stream_object.hpp>
#include <streamlike/python/detail/torch_fast_path.hpp>
#include <streamlike/stream_view.hpp>

#include <cstring>
#include <optional>
#include <utility>

namespace streamlike::python::detail {

/// Which way a stream object was read.
enum class stream_route : unsigned char {
  streamlike, ///< a streamlike.Stream or StreamView, recognised by its type: no Python call
  torch,      ///< a torch stream: its handle, without running its Python-level __cuda_stream__
  protocol,   ///< __cuda_stream__ called (or the deprecated attribute read)
};

/// What reading a stream object found, and which way it read it.
struct [[nodiscard]] stream_read {
  decode_status status;
  stream_route route;
};

/// `obj`'s stream if it is a streamlike object this module recognises, without a Python call: a
/// Stream of the type this module returns, or the package's StreamView once this module knows the
/// package's API (package_api.hpp: from stream_type(), or the current-stream look-ups).
[[nodiscard]] inline bool read_streamlike_object(PyObject* obj, stream_view& out) noexcept {
  if (const stream_object* own = own_stream_object(obj); own != nullptr) {
    out = stream_view{own->handle};
    return true;
  }
  const package_api* api = known_package_api();
  if (api == nullptr || Py_TYPE(obj) != api->view_type) return false;
  cudaStream_t handle = nullptr;
  std::memcpy(&handle, reinterpret_cast<const char*>(obj) + api->view_handle_offset, sizeof handle);
  out = stream_view{handle};
  return true;
}

/// Calls `obj.__cuda_stream__()` (`name`) and decodes its result. Tells apart an object with no
/// __cuda_stream__ at all (or `__cuda_stream__ = None`), the deprecated attribute form (accepted
/// with a DeprecationWarning) and an exception raised inside the method (propagated unchanged).
[[nodiscard]] inline decode_status call_protocol(PyObject* obj, PyObject* name, stream_view& out) noexcept {
  // A method, called without making a bound method object.
  PyObject* call_args[2] = {nullptr, obj}; // slot 0 free for PY_VECTORCALL_ARGUMENTS_OFFSET
  scoped_ref info =
      scoped_ref::steal(PyObject_VectorcallMethod(name, call_args + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr));
  if (info) return decode_info(std::move(info), out);

  saved_error first = saved_error::fetch();
  scoped_ref attribute = scoped_ref::steal(PyObject_GetAttr(obj, name));
  if (!attribute) {
    if (PyErr_ExceptionMatches(PyExc_AttributeError) != 0) {
      PyErr_Clear();
      return decode_status::wrong(problem::no_protocol);
    }
    PyErr_Clear(); // the lookup itself raised (a property): raise what it raised the first time
    first.restore();
    return decode_status::python_error();
  }
  if (attribute.get() == Py_None) return decode_status::wrong(problem::no_protocol); // opts out, like __hash__ = None
  if (PyCallable_Check(attribute.get()) != 0) { // it was called and raised: propagate that, unchanged
    first.restore();
    return decode_status::python_error();
  }
  first.clear(); // "'tuple' object is not callable": the deprecated attribute form
  if (PyErr_WarnEx(PyExc_DeprecationWarning,
                   "Implementing __cuda_stream__ as an attribute is deprecated; it must be implemented as a method",
                   1) < 0) {
    return decode_status::python_error(); // warnings turned into errors
  }
  return decode_info(std::move(attribute), out);
}

/// Reads an object that is not a streamlike object, with `reader`, its type's reader (reader_for;
/// `name`: "__cuda_stream__"): torch's fast path where it applies, else the protocol.
[[nodiscard]] inline stream_read read_foreign_stream(PyObject* obj, PyObject* name, const exporter_reader& reader,
                                                     stream_view& out) noexcept {
  if (reader.torch) {
    if (std::optional<decode_status> status = read_torch_handle(obj, reader, out)) {
      return {std::move(*status), stream_route::torch};
    }
  }
  return {call_protocol(obj, name, out), stream_route::protocol};
}

/// Reads any stream object: a streamlike one by its type, torch's through its fast path, the rest
/// through __cuda_stream__.
[[nodiscard]] inline stream_read read_stream(PyObject* obj, stream_view& out) noexcept {
  if (read_streamlike_object(obj, out)) return {decode_status::read(), stream_route::streamlike};
  PyObject* name = cuda_stream_name();
  if (name == nullptr) return {decode_status::python_error(), stream_route::protocol};
  return read_foreign_stream(obj, name, reader_for(obj, name), out);
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_READ_STREAM_HPP
