// The library's own error messages, phrased once: an operation refused on an empty object, and
// a failed CUDA call named after the type whose operation made it ("shared_stream::sync:
// cudaStreamSynchronize"), the name built only on failure.
#ifndef STREAMLIKE_SRC_ERROR_MESSAGES_HPP
#define STREAMLIKE_SRC_ERROR_MESSAGES_HPP

#include <cuda_runtime_api.h>

#include <string_view>

namespace streamlike::detail {

/// Throws streamlike::error (code cudaErrorInvalidResourceHandle) for `operation` of an empty
/// `type`: "streamlike: <type>::<operation>: the <type> is empty (<emptied_by>); expected <expected>".
[[noreturn]] void throw_empty(std::string_view type, std::string_view operation, std::string_view emptied_by,
                              std::string_view expected);

[[noreturn]] void throw_error_of(cudaError_t code, std::string_view type, std::string_view operation);

/// throw_if_error for an operation of `type`: the error names "<type>::<operation>".
inline void throw_if_error_of(cudaError_t code, std::string_view type, std::string_view operation) {
  if (code != cudaSuccess) [[unlikely]]
    throw_error_of(code, type, operation);
}

} // namespace streamlike::detail

#endif // STREAMLIKE_SRC_ERROR_MESSAGES_HPP
