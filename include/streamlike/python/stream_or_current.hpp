// streamlike/python/stream_or_current.hpp: a stream parameter that defaults to the caller's current
// stream (docs/current-stream.md, "Python").
//
//   #include <streamlike/python/nanobind_current_stream.hpp>   // or pybind11_current_stream.hpp
//   void launch(const Array& a, streamlike::python::stream_or_current s) {
//     kernel<<<grid, block, 0, s.view>>>(...);
//   }
//   m.def("launch", &launch, nb::arg("a"), nb::arg("stream") = nb::none());
//
//   launch(a)                          # the current stream: inside torch.cuda.stream(x), x; inside
//                                      # `with streamlike.use(y):`, y
//   launch(a, stream=streamlike.CURRENT)  # the same, said explicitly
//   launch(a, stream=s)                # s (any object with __cuda_stream__)
//
// The current stream is streamlike::current_stream() of the module's own copy of libstreamlike
// (torch, tvm-ffi: their own current streams); when that names no stream but a default one and
// the streamlike package is loaded, the package answers too (its `use` scopes and CuPy's current
// stream, which only the package can read); link_package_current_stream() makes the module's own
// C++ calls to current_stream() see them too. An explicit stream is checked against the current one
// when the check is on (streamlike/current_stream_check.hpp), the call site being the Python
// caller's file and line.
#ifndef STREAMLIKE_PYTHON_STREAM_OR_CURRENT_HPP
#define STREAMLIKE_PYTHON_STREAM_OR_CURRENT_HPP

#include <streamlike/c/current_stream_provider.h>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/decode_stream.hpp>
#include <streamlike/python/detail/outcome.hpp>
#include <streamlike/python/detail/package_current_stream.hpp>
#include <streamlike/python/detail/translate_exceptions.hpp>
#include <streamlike/stream_view.hpp>

#include <atomic>
#include <cstring>

namespace streamlike::python {

/// A stream argument: the stream given, or the caller's current stream for None and
/// streamlike.CURRENT. Converts to stream_view.
struct stream_or_current {
  stream_view view = stream_view::legacy_default();
  /// True when the caller gave no stream (None or streamlike.CURRENT).
  bool was_current = false;

  constexpr operator stream_view() const noexcept { return view; }
};

namespace detail {

/// The stream_or_current argument `obj`.
[[nodiscard]] inline outcome decode_stream_or_current(PyObject* obj, bool convert, stream_or_current& out) noexcept {
  if (obj == Py_None || is_current_sentinel(obj)) {
    return translate_exceptions(outcome::failed, [&] {
      out = stream_or_current{current_stream_for_python(), true};
      return outcome::ok;
    });
  }
  stream_view view = stream_view::legacy_default();
  const outcome o = decode_view(obj, convert, view); // checks it when the check is on
  if (o == outcome::ok) out = stream_or_current{view, false};
  return o;
}

} // namespace detail

/// Where the package's copy and this module's share the process's registry (docs/current-stream.md,
/// "One registry per process": every copy of this release), there is nothing to link: true, and
/// nothing registered. Else (a package of an older release), registers the streamlike package's
/// answer as a current-stream provider of this module's copy of
/// libstreamlike ("streamlike-package", asked just before streamlike's own), so that C++ code that
/// calls streamlike::current_stream() in this module also sees `with streamlike.use(...)` blocks
/// and CuPy's current stream, which live in the package's copy, and so that a
/// scoped_current_stream of this module sets them too (CuPy included). Call it from the module's
/// init, after importing streamlike (GIL held). False when the package is not loaded; true when
/// linked (also when it already was). The provider answers, enters and leaves only on threads that
/// can call Python (an attached thread state); elsewhere it is skipped.
inline bool link_package_current_stream() {
  const package_current_stream_api* api = detail::package_current_stream();
  if (api == nullptr) return false;
  if (detail::shares_registry(api)) return true; // one registry already: the package's answer is this copy's
  streamlike_current_stream_provider table = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
  table.priority = STREAMLIKE_CURRENT_STREAM_PRIORITY_STREAMLIKE - 1;
  table.name = "streamlike-package";
  table.get = &detail::package_provider_get;
  table.enter = &detail::package_provider_enter;
  table.leave = &detail::package_provider_leave;
  for (const auto& p : streamlike::current_stream_providers())
    if (p.name == table.name) return true;
  streamlike::register_current_stream_provider(table);
  return true;
}

} // namespace streamlike::python

#endif // STREAMLIKE_PYTHON_STREAM_OR_CURRENT_HPP
