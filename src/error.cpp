#include "error_messages.hpp"

#include <streamlike/error.hpp>

#include <atomic>
#include <string>

namespace streamlike {
namespace {

std::atomic<detail::older_driver_advice>& older_driver_advice_slot() noexcept {
  static std::atomic<detail::older_driver_advice> slot{nullptr};
  return slot;
}

std::string version_text(int version) { // 13000 -> "13.0"
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// Why CUDA said cudaErrorInsufficientDriver: no driver at all (cudaDriverGetVersion reports 0
// then, as documented), or one older than this runtime.
std::string insufficient_driver_text() {
  int driver = 0;
  int runtime = 0;
  const bool driver_known = cudaDriverGetVersion(&driver) == cudaSuccess;
  const bool runtime_known = cudaRuntimeGetVersion(&runtime) == cudaSuccess;
  (void)cudaGetLastError();
  const std::string runtime_text = runtime_known ? "CUDA " + version_text(runtime) : "this CUDA runtime";
  if (driver_known && driver == 0) {
    return "no CUDA driver found: libcuda.so.1 could not be loaded. Install the NVIDIA driver (" + runtime_text +
           " needs one that supports it, R580 or newer for CUDA 13) or run on a machine with an NVIDIA GPU";
  }
  if (driver_known && runtime_known && driver < runtime) {
    std::string text = "the CUDA driver supports CUDA " + version_text(driver) + ", older than " + runtime_text +
                       ", which this program was built with: update the NVIDIA driver";
    const detail::older_driver_advice advice = older_driver_advice_slot().load(std::memory_order_acquire);
    const char* more = advice != nullptr && driver / 1000 < runtime / 1000 ? advice(driver / 1000) : nullptr;
    if (more != nullptr) {
      text += ", or ";
      text += more;
    }
    return text;
  }
  return cudaGetErrorString(cudaErrorInsufficientDriver); // nothing better known
}

std::string describe(cudaError_t code, std::string_view operation) {
  std::string text = "streamlike: ";
  text.append(operation);
  text += " failed: ";
  text += cuda_error_text(code);
  return text;
}

} // namespace

std::string cuda_error_text(cudaError_t code) {
  // cudaGetErrorName/String only read static tables, and cudaDriverGetVersion/cudaRuntimeGetVersion
  // answer without a driver: all safe on a machine without one.
  std::string text = cudaGetErrorName(code);
  text += " (";
  if (code == cudaErrorInsufficientDriver) {
    text += insufficient_driver_text();
  } else if (code == cudaErrorNoDevice) {
    text += "no CUDA device: a CUDA driver is installed but reports no GPU; check nvidia-smi, and that "
            "CUDA_VISIBLE_DEVICES (if set) names a device";
  } else {
    text += cudaGetErrorString(code);
  }
  text += ")";
  return text;
}

error::error(cudaError_t code, std::string_view operation)
    : std::runtime_error(describe(code, operation)), code_(code) {}

error::error(cudaError_t code, std::string_view operation, std::string_view reason)
    : std::runtime_error("streamlike: " + std::string(operation) + ": " + std::string(reason)), code_(code) {}

void detail::set_older_driver_advice(older_driver_advice advice) noexcept {
  older_driver_advice_slot().store(advice, std::memory_order_release);
}

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
