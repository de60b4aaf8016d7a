#include "error_messages.hpp"

#include <streamlike/error.hpp>

#include <string>

namespace streamlike {
namespace {

std::string describe(cudaError_t code, std::string_view operation) {
  // cudaGetErrorName/String only read static tables; they are safe without a driver.
  std::string text = "streamlike: ";
  text.append(operation);
  text += " failed: ";
  text += cudaGetErrorName(code);
  text += " (";
  text += cudaGetErrorString(code);
  text += ")";
  return text;
}

} // namespace

error::error(cudaError_t code, std::string_view operation)
    : std::runtime_error(describe(code, operation)), code_(code) {}

error::error(cudaError_t code, std::string_view operation, std::string_view reason)
    : std::runtime_error("streamlike: " + std::string(operation) + ": " + std::string(reason)), code_(code) {}

void detail::throw_error(cudaError_t code, std::string_view operation) {
  // The error is reported by the exception; leave none behind for the caller's next launch check
  // (as CCCL's _CCCL_TRY_CUDA_API and RMM's RMM_CUDA_TRY do).
  (void)cudaGetLastError();
  throw error(code, operation);
}

void detail::throw_error_of(cudaError_t code, std::string_view type, std::string_view operation) {
  std::string name(type);
  name += "::";
  name += operation;
  throw_error(code, name);
}

void detail::throw_empty(std::string_view type, std::string_view operation, std::string_view emptied_by,
                         std::string_view expected) {
  std::string name(type);
  name += "::";
  name += operation;
  std::string reason = "the ";
  reason += type;
  reason += " is empty (";
  reason += emptied_by;
  reason += "); expected ";
  reason += expected;
  throw error(cudaErrorInvalidResourceHandle, name, reason);
}

} // namespace streamlike
