#include "devices.hpp"

#include "capture_checks.hpp"
#include "driver_entry_points.hpp"
#include "error_messages.hpp"

#include <streamlike/error.hpp>
#include <streamlike/stream_view.hpp>

#include <atomic>
#include <stdexcept>
#include <string>

namespace streamlike::detail::devices {

std::atomic<int> remembered_count{0};

namespace {

// CUDA's absence once met (a cuda_absent code), else cudaSuccess.
std::atomic<cudaError_t> remembered_absence{cudaSuccess};

count_answer ask_count() noexcept {
  // The driver's answer where it has one; before cuInit it answers CUDA_ERROR_NOT_INITIALIZED,
  // and without a device it has none: the runtime's call then initializes it, or says why not.
  if (const auto get_count = driver::get().device_get_count) {
    int count = 0;
    if (get_count(&count) == CUDA_SUCCESS && count > 0) return {count, cudaSuccess};
  }
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error == cudaSuccess && count > 0) return {count, cudaSuccess};
  (void)cudaGetLastError();
  return {0, error != cudaSuccess ? error : cudaErrorNoDevice};
}

} // namespace

count_answer try_count() noexcept {
  if (const int count = remembered_count.load(std::memory_order_relaxed); count > 0) [[likely]]
    return {count, cudaSuccess};
  if (const cudaError_t absence = remembered_absence.load(std::memory_order_relaxed); absence != cudaSuccess)
    return {0, absence};
  // Threads that ask at once store the same answer.
  const count_answer answer = ask_count();
  if (answer.count > 0) {
    remembered_count.store(answer.count, std::memory_order_relaxed);
  } else if (cuda_absent(answer.error)) {
    remembered_absence.store(answer.error, std::memory_order_relaxed);
  }
  return answer;
}

int count(std::string_view who) {
  const count_answer answer = try_count();
  if (answer.count == 0) [[unlikely]]
    throw_error(answer.error, std::string(who) + ": cudaGetDeviceCount");
  return answer.count;
}

void check_named(int device, std::string_view who) {
  if (const int n = count(who); device < 0 || device >= n) {
    throw std::invalid_argument("streamlike: " + std::string(who) + ": device " + std::to_string(device) +
                                " does not exist; expected 0.." + std::to_string(n - 1) + " (" + std::to_string(n) +
                                " device(s))");
  }
}

bool exists(int device) noexcept { return device >= 0 && device < try_count().count; }

int current(std::string_view who) {
  int device = 0;
  if (const cudaError_t status = cudaGetDevice(&device); status != cudaSuccess) [[unlikely]]
    throw_if_error(status, std::string(who) + ": cudaGetDevice");
  return device;
}

int current_or_minus_one() noexcept {
  int device = -1;
  if (cudaGetDevice(&device) == cudaSuccess) [[likely]]
    return device;
  (void)cudaGetLastError();
  return -1;
}

int of_context_or_minus_one(CUcontext context) noexcept {
  const auto get_device = driver::get().ctx_get_device;
  CUdevice device = -1;
  if (get_device == nullptr || get_device(&device, context) != CUDA_SUCCESS) return -1;
  return static_cast<int>(device);
}

namespace {

// The driver's answer, or -1 where it has none.
int driver_device_of(cudaStream_t stream) noexcept {
  const auto get_ctx = driver::get().stream_get_ctx;
  CUcontext ctx = nullptr;
  if (get_ctx == nullptr || get_ctx(stream, &ctx) != CUDA_SUCCESS || ctx == nullptr) return -1;
  return of_context_or_minus_one(ctx);
}

} // namespace

int of(cudaStream_t stream, std::string_view type, std::string_view operation) {
  int device = -1;
  if (stream_view{stream}.is_default()) {
    if (device = current_or_minus_one(); device >= 0) [[likely]]
      return device;
  } else if (device = driver_device_of(stream); device >= 0) [[likely]] {
    return device;
  }
  // No answer without the runtime's stream query: it reports the failure in its own words (no
  // driver, an invalid handle), and is made only on a stream that is not capturing.
  capture::refuse_if_capturing(stream, type, operation, "cudaStreamGetDevice");
  throw_if_error_of(cudaStreamGetDevice(stream, &device), type, std::string(operation) + ": cudaStreamGetDevice");
  return device;
}

int of_or_minus_one(cudaStream_t stream) noexcept {
  if (stream_view{stream}.is_default()) return current_or_minus_one();
  if (const int device = driver_device_of(stream); device >= 0) return device;
  int device = -1;
  if (capture::status_or_none(stream) != cudaStreamCaptureStatusNone ||
      cudaStreamGetDevice(stream, &device) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return device;
}

} // namespace streamlike::detail::devices
