// streamlike/python/detail/decode_stream.hpp: stream_view and shared_stream arguments, read from
// any Python object with __cuda_stream__ (docs/python-bridge.md, "Reading a stream from Python")
// by the one reader (read_stream.hpp) and the one owning read (read_owning_stream.hpp). These are
// the casters' entry points: each reports its problems once, naming the argument.
#ifndef STREAMLIKE_PYTHON_DETAIL_DECODE_STREAM_HPP
#define STREAMLIKE_PYTHON_DETAIL_DECODE_STREAM_HPP

#include <streamlike/python/detail/check_given_stream.hpp>
#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/decode_problem.hpp>
#include <streamlike/python/detail/outcome.hpp>
#include <streamlike/python/detail/package_current_stream.hpp>
#include <streamlike/python/detail/read_owning_stream.hpp>
#include <streamlike/python/detail/read_stream.hpp>
#include <streamlike/python/detail/translate_exceptions.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

namespace streamlike::python::detail {

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
  const outcome o = report(obj, convert, read_stream(obj, out).status);
  if (o == outcome::ok) check_given_stream(out); // the opt-in current-stream check
  return o;
}

/// The shared_stream argument `obj` (read_owning_stream): an owning streamlike.Stream of the type
/// this module returns shares its owner; an object with __cuda_stream_owned__ gives an owning
/// reference (the reference keeps no Python object of its own); any other is held.
[[nodiscard]] inline outcome decode_shared(PyObject* obj, bool convert, shared_stream& out) noexcept {
  return report(obj, convert, read_owning_stream(obj, out).status);
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_DECODE_STREAM_HPP
