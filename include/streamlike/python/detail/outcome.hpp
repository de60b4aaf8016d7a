// streamlike/python/detail/outcome.hpp: what the decoders tell a caster (nanobind's or
// pybind11's) about one argument, and the value a caster holds before it has read one.
#ifndef STREAMLIKE_PYTHON_DETAIL_OUTCOME_HPP
#define STREAMLIKE_PYTHON_DETAIL_OUTCOME_HPP

#include <streamlike/stream_view.hpp>

#include <type_traits>

namespace streamlike::python::detail {

/// The outcome of reading an argument.
enum class outcome {
  ok,       // converted
  declined, // not this kind of object; no Python exception is set (the binding may try others)
  failed,   // a Python exception is set: raise it
};

/// What a caster's value holds before an argument is read into it: a stream_view has no default
/// constructor, so it starts as the legacy default stream (always overwritten before use).
template <class Value>
[[nodiscard]] Value unread_value() noexcept {
  if constexpr (std::is_same_v<Value, stream_view>) {
    return stream_view::legacy_default();
  } else {
    return Value{};
  }
}

} // namespace streamlike::python::detail

#endif // STREAMLIKE_PYTHON_DETAIL_OUTCOME_HPP
