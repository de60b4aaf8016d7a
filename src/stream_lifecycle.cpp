// Creating, inspecting and destroying the streams that shared_stream and unique_stream own.
#include "driver_entry_points.hpp"

#include <streamlike/detail/stream_control_block.hpp>
#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_options.hpp>
#include <streamlike/unique_stream.hpp>

#include <stdexcept>
#include <string>

namespace streamlike::detail {
namespace {

bool names_default_stream(cudaStream_t handle) noexcept {
  return handle == cudaStream_t{} || handle == cudaStreamLegacy || handle == cudaStreamPerThread;
}

int checked_device(const stream_options& options, const char* who) {
  int count = 0;
  throw_if_error(cudaGetDeviceCount(&count), std::string(who) + ": cudaGetDeviceCount");
  int device = 0;
  if (options.device) {
    device = *options.device;
  } else {
    throw_if_error(cudaGetDevice(&device), std::string(who) + ": cudaGetDevice");
  }
  if (device < 0 || device >= count) {
    throw std::invalid_argument(std::string("streamlike: ") + who + ": device " + std::to_string(device) +
                                " does not exist; expected 0.." + std::to_string(count - 1) + " (" +
                                std::to_string(count) + " device(s))");
  }
  return device;
}

// The context a stream lives in and whether it is its device's primary context.
struct context_identity {
  unsigned long long id = 0;
  bool primary = false;
};

context_identity identify_context(cudaStream_t handle, int device) noexcept {
  const auto& drv = driver::get();
  context_identity identity;
  if (!drv.complete()) return identity;
  CUcontext ctx = nullptr;
  if (drv.stream_get_ctx(handle, &ctx) != CUDA_SUCCESS || drv.ctx_get_id(ctx, &identity.id) != CUDA_SUCCESS) {
    return context_identity{};
  }
  CUcontext primary = nullptr;
  if (drv.primary_ctx_retain(&primary, device) == CUDA_SUCCESS) {
    identity.primary = (primary == ctx);
    drv.primary_ctx_release(device);
  }
  return identity;
}

// True unless the stream's primary context was reset (cudaDeviceReset) since it was made: the
// stream died with it, and its handle must not be touched.
bool context_still_alive(const stream_facts& facts) noexcept {
  if (facts.context_id == 0) return true; // not a primary-context stream we could identify
  return driver::primary_context_id(facts.device) == facts.context_id;
}

void destroy_on_device(cudaStream_t handle, int device) noexcept {
  int previous = -1;
  // cudaErrorCudartUnloading (process exit) or a dead driver: the stream is gone with them.
  if (cudaGetDevice(&previous) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  const bool switch_device = device >= 0 && device != previous;
  if (switch_device && cudaSetDevice(device) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  if (cudaStreamDestroy(handle) != cudaSuccess) cudaGetLastError();
  if (switch_device && cudaSetDevice(previous) != cudaSuccess) cudaGetLastError();
}

// The block of a stream streamlike created or adopted: dispose destroys the stream.
class owned_stream_block final : public stream_control_block {
public:
  using stream_control_block::stream_control_block;

private:
  void dispose() noexcept override {
    if (context_still_alive(known_facts())) destroy_on_device(handle(), known_facts().device);
    delete this;
  }
};

cudaStream_t create_stream(const stream_options& options, const char* who) {
  const int device = checked_device(options, who);
  const device_guard on_device(device);
  int least = 0;
  int greatest = 0;
  throw_if_error(cudaDeviceGetStreamPriorityRange(&least, &greatest),
                 std::string(who) + ": cudaDeviceGetStreamPriorityRange");
  if (options.priority < greatest || options.priority > least) {
    throw std::invalid_argument(std::string("streamlike: ") + who + ": priority " + std::to_string(options.priority) +
                                " is outside device " + std::to_string(device) + "'s range; expected " +
                                std::to_string(greatest) + " (highest) to " + std::to_string(least) + " (lowest)");
  }
  cudaStream_t handle = nullptr;
  throw_if_error(cudaStreamCreateWithPriority(&handle, options.non_blocking ? cudaStreamNonBlocking : cudaStreamDefault,
                                              options.priority),
                 std::string(who) + ": cudaStreamCreateWithPriority");
  return handle;
}

[[noreturn]] void throw_cannot_own_default(const char* who) {
  throw std::invalid_argument(std::string("streamlike: ") + who +
                              ": a default stream (0, cudaStreamLegacy, cudaStreamPerThread) cannot be owned; "
                              "expected a handle from cudaStreamCreate*. For an immortal shared default stream "
                              "use shared_stream::legacy_default() or per_thread_default()");
}

// The block of a default stream: heap-allocated, never freed, and dispose() does nothing, so
// shared_streams of it stay valid whatever the order of static destruction.
class immortal_block final : public stream_control_block {
public:
  explicit immortal_block(cudaStream_t handle) noexcept : stream_control_block(handle, stream_facts{}) {}

private:
  void dispose() noexcept override {}
};

} // namespace

stream_facts query_stream_facts(cudaStream_t handle) {
  stream_facts facts;
  throw_if_error(cudaStreamGetDevice(handle, &facts.device), "cudaStreamGetDevice");
  throw_if_error(cudaStreamGetId(handle, &facts.id), "cudaStreamGetId");
  throw_if_error(cudaStreamGetFlags(handle, &facts.flags), "cudaStreamGetFlags");
  throw_if_error(cudaStreamGetPriority(handle, &facts.priority), "cudaStreamGetPriority");
  const context_identity ctx = identify_context(handle, facts.device);
  facts.context_id = ctx.primary ? ctx.id : 0;
  facts.cached = true;
  return facts;
}

void destroy_stream(cudaStream_t handle) noexcept {
  int device = -1;
  if (cudaStreamGetDevice(handle, &device) != cudaSuccess) {
    cudaGetLastError();
    device = -1;
  }
  destroy_on_device(handle, device);
}

struct shared_stream_access {
  static shared_stream make(stream_control_block* block) noexcept { return shared_stream(block); }
};

namespace {

// Takes ownership of `handle` only once its block exists; until then a failure leaves the
// handle to the caller (adopt) or destroys it (create).
shared_stream make_owned_shared(cudaStream_t handle, bool destroy_on_failure) {
  try {
    const stream_facts facts = query_stream_facts(handle);
    return shared_stream_access::make(new owned_stream_block(handle, facts));
  } catch (...) {
    if (destroy_on_failure) destroy_stream(handle);
    throw;
  }
}

// Never destroyed: shared_streams of the default streams may outlive every static.
shared_stream immortal(cudaStream_t handle) noexcept {
  return shared_stream_access::make(new immortal_block(handle));
}

} // namespace
} // namespace streamlike::detail

namespace streamlike {

shared_stream shared_stream::create(const stream_options& options) {
  return detail::make_owned_shared(detail::create_stream(options, "shared_stream::create"), true);
}

shared_stream shared_stream::adopt(cudaStream_t handle) {
  if (detail::names_default_stream(handle)) detail::throw_cannot_own_default("shared_stream::adopt");
  return detail::make_owned_shared(handle, false);
}

shared_stream shared_stream::legacy_default() noexcept {
  static const shared_stream stream = detail::immortal(cudaStreamLegacy);
  return stream;
}

shared_stream shared_stream::per_thread_default() noexcept {
  static const shared_stream stream = detail::immortal(cudaStreamPerThread);
  return stream;
}

unique_stream unique_stream::create(const stream_options& options) {
  return unique_stream(detail::create_stream(options, "unique_stream::create"));
}

unique_stream unique_stream::adopt(cudaStream_t handle) {
  if (detail::names_default_stream(handle)) detail::throw_cannot_own_default("unique_stream::adopt");
  return unique_stream(handle);
}

void unique_stream::throw_empty(const char* what) {
  throw error(cudaErrorInvalidResourceHandle, std::string("unique_stream::") + what,
              "the unique_stream is empty (default-constructed, moved-from or released); expected one that owns a stream");
}

} // namespace streamlike
