// streamlike/error.hpp: the exception for failed CUDA calls.
#ifndef STREAMLIKE_ERROR_HPP
#define STREAMLIKE_ERROR_HPP

#include <streamlike/detail/export.hpp>

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace streamlike {

/// "<name> (<text>)" for a CUDA error, as streamlike::error and the Python package word it: CUDA's
/// own text, except where it misleads. Without a driver CUDA says cudaErrorInsufficientDriver
/// ("CUDA driver version is insufficient"), which sends users to upgrade a driver they do not
/// have; this says "no CUDA driver found" and what to install (or, with a driver older than the
/// runtime, both versions). cudaErrorNoDevice says "no CUDA device" and where to look. Never
/// throws but std::bad_alloc; safe without a driver.
[[nodiscard]] STREAMLIKE_API std::string cuda_error_text(cudaError_t code);

/// A CUDA call failed. what() names the operation, the CUDA error's name and its text
/// (cuda_error_text), e.g. "streamlike: cudaStreamCreateWithPriority failed: cudaErrorNoDevice (no CUDA
/// device: ...)".
class STREAMLIKE_API error : public std::runtime_error {
public:
  /// A CUDA call failed: "streamlike: <operation> failed: " + cuda_error_text(code).
  error(cudaError_t code, std::string_view operation);
  /// An operation refused before any CUDA call (e.g. on an empty shared_stream): "streamlike:
  /// <operation>: <reason>". code() is the CUDA error closest in meaning.
  error(cudaError_t code, std::string_view operation, std::string_view reason);

  [[nodiscard]] cudaError_t code() const noexcept { return code_; }

private:
  cudaError_t code_;
};

namespace detail {
/// What a program built on streamlike offers besides updating the driver when the driver is older
/// than the runtime's CUDA major (cudaErrorInsufficientDriver): the Python package names its build
/// for that driver ("pip install streamlike-cu12"). Called with the driver's CUDA major; returns a
/// static string appended to the error's text, or nullptr for nothing to add. Set before CUDA is
/// used (the package sets it when imported).
using older_driver_advice = const char* (*)(int driver_major) noexcept;
STREAMLIKE_API void set_older_driver_advice(older_driver_advice advice) noexcept;

/// Throws streamlike::error; out of line, so the cold path stays out of its callers.
[[noreturn]] STREAMLIKE_API void throw_error(cudaError_t code, std::string_view operation);

inline void throw_if_error(cudaError_t code, std::string_view operation) {
  if (code != cudaSuccess) [[unlikely]]
    throw_error(code, operation);
}
} // namespace detail

} // namespace streamlike

#endif // STREAMLIKE_ERROR_HPP
