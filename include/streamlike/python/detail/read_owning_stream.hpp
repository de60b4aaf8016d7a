// streamlike/python/detail/read_owning_stream.hpp: the one owning read of a Python stream object,
// a shared_stream that keeps the stream alive, for the casters' shared_stream parameters and the
// package's Stream(obj) alike (docs/python-bridge.md, "Keeping a Python exporter alive from C++").
#ifndef STREAMLIKE_PYTHON_DETAIL_READ_OWNING_STREAM_HPP
#define STREAMLIKE_PYTHON_DETAIL_READ_OWNING_STREAM_HPP

#include <streamlike/python/detail/cpython.hpp>
#include <streamlike/python/detail/decode_problem.hpp>
#include <streamlike/python/detail/known_exporters.hpp>
#include <streamlike/python/detail/owned_capsule.hpp>
#include <streamlike/python/detail/read_stream.hpp>
#include <streamlike/python/detail/reference_block.hpp>
#include <streamlike/python/detail/stream_object.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <utility>

namespace streamlike::python::detail {

/// How an owning read holds the stream.
enum class owner_route : unsigned char {
  shared,        ///< an owning streamlike.Stream's own owner, shared: one atomic increment
  owned_capsule, ///< an owning reference taken from __cuda_stream_owned__: it keeps no Python object
  borrowed,      ///< read as `route` says, and the object held by the shared_stream's block
};

/// What an owning read found, how it holds the stream, and which way it read it.
struct [[nodiscard]] owning_read {
  decode_status status;
  owner_route how;
  stream_route route; ///< borrowed: the reader's route; shared: streamlike; owned_capsule: protocol (a method call)
};

/// A shared_stream viewing `view` and holding `obj` until the last C++ reference drops (taking the
/// GIL then); no CUDA call.
[[nodiscard]] inline owning_read hold_object(PyObject* obj, stream_view view, stream_route route,
                                             shared_stream& out) noexcept {
  out = reference_block::make(view, obj); // empty: MemoryError is set
  return {out ? decode_status::read() : decode_status::python_error(), owner_route::borrowed, route};
}

/// Reads `obj` into `out`, which keeps the stream alive: an owning streamlike.Stream of the type
/// this module returns shares its owner; an object with __cuda_stream_owned__ gives an owning
/// reference; any other stream object (a StreamView or non-owning Stream among them: there is
/// nothing to own) is read by read_stream and held.
[[nodiscard]] inline owning_read read_owning_stream(PyObject* obj, shared_stream& out) noexcept {
  if (const stream_object* own = own_stream_object(obj); own != nullptr && own->owner) {
    out = own->owner;
    return {decode_status::read(), owner_route::shared, stream_route::streamlike};
  }
  stream_view view = stream_view::legacy_default();
  if (read_streamlike_object(obj, view)) return hold_object(obj, view, stream_route::streamlike, out);
  PyObject* name = cuda_stream_name();
  if (name == nullptr) return {decode_status::python_error(), owner_route::borrowed, stream_route::protocol};
  exporter_reader reader = reader_for(obj, name);
  if (!reader.owned_absent) { // the type's reader says when there is no __cuda_stream_owned__ to look up
    switch (read_owned(obj, out)) {
      case owned_read::taken: return {decode_status::read(), owner_route::owned_capsule, stream_route::protocol};
      case owned_read::failed:
        return {decode_status::python_error(), owner_route::owned_capsule, stream_route::protocol};
      case owned_read::not_offered: break;
    }
    reader = reader_for(obj, name); // __cuda_stream_owned__ ran Python code: the object's type may differ
  }
  stream_read read = read_foreign_stream(obj, name, reader, view);
  if (!read.status.ok()) return {std::move(read.status), owner_route::borrowed, read.route};
  return hold_object(obj, view, read.route, out);
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_READ_OWNING_STREAM_HPP
