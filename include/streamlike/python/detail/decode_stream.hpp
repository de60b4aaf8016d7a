// streamlike/python/detail/decode_stream.hpp: stream_view and shared_stream arguments, read from
// any Python object with __cuda_stream__ (docs/python-bridge.md, "Reading a stream from Python").
// These are the casters' entry points: each reports its problems once, naming the argument.
#ifndef STREAMLIKE_PYTHON_DETAIL_DECODE_STREAM_HPP
#define STREAMLIKE_PYTHON_DETAIL_DECODE_STREAM_HPP

#include <streamlike/python/detail/check_given_stream.hpp>
#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/decode_info.hpp>
#include <streamlike/python/detail/decode_problem.hpp>
#include <streamlike/python/detail/known_exporters.hpp>
#include <streamlike/python/detail/owned_capsule.hpp>
#include <streamlike/python/detail/package_current_stream.hpp>
#include <streamlike/python/detail/outcome.hpp>
#include <streamlike/python/detail/reference_block.hpp>
#include <streamlike/python/detail/saved_error.hpp>
#include <streamlike/python/detail/stream_object.hpp>
#include <streamlike/python/detail/translate_exceptions.hpp>
#include <streamlike/python/detail/torch_fast_path.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <optional>
#include <utility>

namespace streamlike::python::detail {

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

/// Reads a stream view from an object that is not ours, with `reader`, its type's reader
/// (reader_for; `name`: "__cuda_stream__").
[[nodiscard]] inline decode_status read_foreign_view(PyObject* obj, PyObject* name, const exporter_reader& reader,
                                                     stream_view& out) noexcept {
  if (reader.torch) {
    if (std::optional<decode_status> status = read_torch_handle(obj, reader, out)) return std::move(*status);
  }
  return call_protocol(obj, name, out);
}

/// Reads a stream view from any object with __cuda_stream__.
[[nodiscard]] inline decode_status read_view(PyObject* obj, stream_view& out) noexcept {
  if (const stream_object* own = own_stream_object(obj); own != nullptr) { // ours: no Python call
    out = stream_view{own->handle};
    return decode_status::read();
  }
  PyObject* name = cuda_stream_name();
  if (name == nullptr) return decode_status::python_error();
  return read_foreign_view(obj, name, reader_for(obj, name), out);
}

/// The stream_view argument `obj`. `convert`: whether the binding is in its implicit-conversion
/// pass (only then does a missing __cuda_stream__ raise TypeError; before, it declines, so that
/// other overloads can match exactly first).
[[nodiscard]] inline outcome decode_view(PyObject* obj, bool convert, stream_view& out) noexcept {
  if (is_current_sentinel(obj)) { // streamlike.CURRENT: the caller's current stream, not checked
    return translate_exceptions(outcome::failed, [&] {
      out = current_stream_for_python();
      return outcome::ok;
    });
  }
  const outcome o = report(obj, convert, read_view(obj, out));
  if (o == outcome::ok) check_given_stream(out); // the opt-in current-stream check
  return o;
}

/// Holds `obj`, read as `view`, in `out`: a strong reference to the object until the last C++
/// reference drops (taking the GIL then).
[[nodiscard]] inline outcome keep_borrowed(PyObject* obj, stream_view view, shared_stream& out) noexcept {
  out = reference_block::make(view, obj);     // no CUDA call
  return out ? outcome::ok : outcome::failed; // empty: MemoryError is set
}

/// The shared_stream argument `obj`, borrowed (keep_borrowed).
[[nodiscard]] inline outcome decode_shared_borrowed(PyObject* obj, bool convert, shared_stream& out) noexcept {
  stream_view view = stream_view::legacy_default();
  if (const outcome o = report(obj, convert, read_view(obj, view)); o != outcome::ok) return o;
  return keep_borrowed(obj, view, out);
}

/// The shared_stream argument `obj`. An owning streamlike.Stream of the type this module returns
/// shares its owner; an object with __cuda_stream_owned__ gives an owning reference (the reference
/// keeps no Python object of its own); any other is borrowed (decode_shared_borrowed).
[[nodiscard]] inline outcome decode_shared(PyObject* obj, bool convert, shared_stream& out) noexcept {
  if (const stream_object* own = own_stream_object(obj); own != nullptr) {
    if (own->owner) {
      out = own->owner; // one atomic increment
      return outcome::ok;
    }
    return decode_shared_borrowed(obj, convert, out); // a view: there is nothing to own
  }
  PyObject* name = cuda_stream_name();
  if (name == nullptr) return outcome::failed;
  exporter_reader reader = reader_for(obj, name);
  if (!reader.owned_absent) { // the type's reader says when there is no __cuda_stream_owned__ to look up
    switch (read_owned(obj, out)) {
      case owned_read::taken: return outcome::ok;
      case owned_read::failed: return outcome::failed;
      case owned_read::not_offered: break;
    }
    reader = reader_for(obj, name); // __cuda_stream_owned__ ran Python code: the object's type may differ
  }
  stream_view view = stream_view::legacy_default();
  if (const outcome o = report(obj, convert, read_foreign_view(obj, name, reader, view)); o != outcome::ok) return o;
  return keep_borrowed(obj, view, out);
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_DECODE_STREAM_HPP
