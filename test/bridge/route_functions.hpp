// What the casters' readers report (read_stream.hpp, read_owning_stream.hpp), bound by both test
// modules as route_of and owning_route_of, so that a test sees which way an object was read, not
// only the handle it gave.
#ifndef STREAMLIKE_TEST_PYTHON_ROUTE_FUNCTIONS_HPP
#define STREAMLIKE_TEST_PYTHON_ROUTE_FUNCTIONS_HPP

#include <streamlike/python/detail/decode_problem.hpp>
#include <streamlike/python/detail/read_owning_stream.hpp>
#include <streamlike/python/detail/read_stream.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

namespace bridge_test {

namespace sd = streamlike::python::detail;

[[nodiscard]] inline const char* route_name(sd::stream_route route) noexcept {
  switch (route) {
    case sd::stream_route::streamlike: return "streamlike";
    case sd::stream_route::torch: return "torch";
    case sd::stream_route::protocol: break;
  }
  return "protocol";
}

[[nodiscard]] inline const char* owner_route_name(sd::owner_route how) noexcept {
  switch (how) {
    case sd::owner_route::shared: return "shared";
    case sd::owner_route::owned_capsule: return "owned-capsule";
    case sd::owner_route::borrowed: break;
  }
  return "borrowed";
}

/// The way the one reader read `obj`, and the handle: false, with the Python exception set, if it
/// could not (the caster's exception).
inline bool route_of(PyObject* obj, std::pair<std::string, std::uintptr_t>& out) {
  streamlike::stream_view view = streamlike::stream_view::legacy_default();
  const sd::stream_read read = sd::read_stream(obj, view);
  if (sd::report(obj, true, read.status) != sd::outcome::ok) return false;
  out = {route_name(read.route), reinterpret_cast<std::uintptr_t>(view.get())};
  return true;
}

/// The owning read of `obj`: how it holds the stream, which way it read it, and how many
/// shared_streams share it while held; false, with the Python exception set, if it could not.
struct owning_route {
  std::string how;
  std::string route;
  long use_count = 0;
};
inline bool owning_route_of(PyObject* obj, owning_route& out) {
  streamlike::shared_stream owner;
  const sd::owning_read read = sd::read_owning_stream(obj, owner);
  if (sd::report(obj, true, read.status) != sd::outcome::ok) return false;
  out = {owner_route_name(read.how), route_name(read.route), owner.use_count()};
  return true;
}

/// Binds both into `m`; `Error` is the binding's exception that carries the Python one set.
template <class Error, class Handle, class Module>
void bind_routes(Module& m) {
  m.def("route_of", [](Handle obj) {
    std::pair<std::string, std::uintptr_t> out;
    if (!route_of(obj.ptr(), out)) throw Error();
    return out;
  });
  m.def("owning_route_of", [](Handle obj) {
    owning_route out;
    if (!owning_route_of(obj.ptr(), out)) throw Error();
    return std::make_tuple(out.how, out.route, out.use_count);
  });
}

} // namespace bridge_test

#endif // STREAMLIKE_TEST_PYTHON_ROUTE_FUNCTIONS_HPP
