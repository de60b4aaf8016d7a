// streamlike/adapters/xla_ffi.hpp: XLA's stream as the current stream inside an XLA FFI handler.
//
// JAX hands its stream to a custom call only through the XLA FFI: a handler bound with
// Ctx<PlatformStream<cudaStream_t>>() gets the stream XLA runs it on, and nothing else in the
// process knows it (torch's, tvm-ffi's and streamlike's current streams are whatever they were).
// A library written against streamlike::current_stream() would launch on the wrong stream there.
// This header opens a streamlike::scoped_current_stream on XLA's stream around the handler's body:
//
//   #include <streamlike/adapters/xla_ffi.hpp>
//   namespace xla_bridge = streamlike::adapters::xla_ffi;
//
//   xla::ffi::Error scale(xla::ffi::Buffer<xla::ffi::F32> x, xla::ffi::ResultBuffer<xla::ffi::F32> y,
//                         float a) {
//     my_library::scale(a, x.typed_data(), y->typed_data(), x.element_count()); // on current_stream()
//     return xla::ffi::Error::Success();
//   }
//   XLA_FFI_DEFINE_HANDLER_SYMBOL(scale_handler, xla_bridge::on_xla_stream(scale),
//                                 xla_bridge::bind().Arg<...>().Ret<...>().Attr<float>("a"),
//                                 {xla_bridge::command_buffer_compatible});
//
// Inside the body, XLA's stream is current on its device in streamlike, torch and tvm-ffi where
// they are loaded, and in CuPy where the module linked the package's current stream
// (streamlike::python::link_package_current_stream()) and the thread can call Python (XLA runs
// handlers with the GIL released, so CuPy is usually skipped). After the body every one of them
// is back on what it had, also when nothing was set before and when the body throws.
//
// Errors: an exception leaving the body (or the scope: a provider that fails to set the stream)
// becomes an xla::ffi::Error (std::invalid_argument: kInvalidArgument, anything else: kInternal)
// with the exception's text; nothing is thrown across XLA's C boundary.
//
// Command buffers: XLA records a handler declared command-buffer compatible into a CUDA graph by
// stream capture. current_stream() and the scope make no call a capture forbids, so the bridge
// itself is compatible; declare the trait when the body's own calls are (no allocation, no
// stream query or synchronization).
//
// This header needs XLA's FFI headers (jax.ffi.include_dir(), "xla/ffi/api/ffi.h") on the include
// path; it is not part of the headers that compile without third-party libraries.
#ifndef STREAMLIKE_ADAPTERS_XLA_FFI_HPP
#define STREAMLIKE_ADAPTERS_XLA_FFI_HPP

#include <streamlike/current_stream.hpp>
#include <streamlike/stream_view.hpp>

#include "xla/ffi/api/ffi.h"

#include <cuda_runtime_api.h>

#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace streamlike::adapters::xla_ffi {

/// The context binding that hands a handler XLA's CUDA stream.
using platform_stream = xla::ffi::PlatformStream<cudaStream_t>;

/// A binding whose first parameter is XLA's stream: add the handler's .Arg/.Ret/.Attr bindings,
/// then bind the body with .To(on_xla_stream(body)), or hand both to XLA_FFI_DEFINE_HANDLER*.
[[nodiscard]] inline auto bind() { return xla::ffi::Ffi::Bind().Ctx<platform_stream>(); }

/// XLA's trait for handlers that may be recorded into a command buffer (a CUDA graph), for the
/// traits list of XLA_FFI_DEFINE_HANDLER* or Binding::To.
inline constexpr xla::ffi::Traits command_buffer_compatible = xla::ffi::Traits::kCmdBufferCompatible;

namespace detail {

/// What an exception that left a handler becomes: an error XLA reports with its text.
inline xla::ffi::Error error_from_current_exception() noexcept {
  try {
    try {
      throw;
    } catch (const std::invalid_argument& e) {
      return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument, e.what());
    } catch (const std::exception& e) {
      return xla::ffi::Error(xla::ffi::ErrorCode::kInternal, e.what());
    } catch (...) {
      return xla::ffi::Error(xla::ffi::ErrorCode::kInternal, "an exception that is not a std::exception");
    }
  } catch (...) {
    // Building the message failed (no memory): the code still says that it failed.
    return xla::ffi::Error(xla::ffi::ErrorCode::kResourceExhausted, std::string{});
  }
}

/// Whether a handler body takes XLA's stream (a stream_view) before the handler's parameters.
template <class Body, class... Args>
inline constexpr bool takes_stream = std::is_invocable_v<const Body&, stream_view, Args...>;

/// What a handler body returns: void or xla::ffi::Error.
template <class Body, class... Args>
using body_result_t =
    typename std::conditional_t<takes_stream<Body, Args...>, std::invoke_result<const Body&, stream_view, Args...>,
                                std::invoke_result<const Body&, Args...>>::type;

} // namespace detail

/// Calls `body(args...)` (or `body(stream_view, args...)` where the body takes the stream first)
/// with `stream` current on its device in streamlike and every framework, and restores each after.
/// The body returns void or xla::ffi::Error; an exception becomes an xla::ffi::Error.
template <class Body, class... Args>
[[nodiscard]] xla::ffi::Error run_on_stream(cudaStream_t stream, const Body& body, Args&&... args) noexcept {
  using result = detail::body_result_t<Body, Args&&...>;
  static_assert(std::is_void_v<result> || std::is_same_v<std::remove_cvref_t<result>, xla::ffi::Error>,
                "an XLA FFI handler body bound with on_xla_stream returns void or xla::ffi::Error");
  try {
    const stream_view xla_stream{stream};
    const scoped_current_stream scope{xla_stream};
    const auto call = [&]() -> result {
      if constexpr (detail::takes_stream<Body, Args&&...>)
        return body(xla_stream, std::forward<Args>(args)...);
      else
        return body(std::forward<Args>(args)...);
    };
    if constexpr (std::is_void_v<result>) {
      call();
      return xla::ffi::Error::Success();
    } else {
      return call();
    }
  } catch (...) {
    return detail::error_from_current_exception();
  }
}

/// The callable to bind to bind()'s binding: it takes XLA's stream, then the decoded arguments,
/// results and attributes, and runs `body` on them with XLA's stream current (run_on_stream).
template <class Body>
[[nodiscard]] auto on_xla_stream(Body body) {
  return [body = std::move(body)](cudaStream_t stream, auto&&... args) noexcept -> xla::ffi::Error {
    return run_on_stream(stream, body, std::forward<decltype(args)>(args)...);
  };
}

} // namespace streamlike::adapters::xla_ffi

#endif // STREAMLIKE_ADAPTERS_XLA_FFI_HPP
