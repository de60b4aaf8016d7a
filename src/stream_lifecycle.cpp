#include "stream_lifecycle.hpp"

#include "capture_checks.hpp"
#include "cuda_context.hpp"
#include "devices.hpp"
#include "driver_entry_points.hpp"
#include "error_messages.hpp"
#include "nothrow_device_guard.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace streamlike::detail {

void throw_cannot_own_default(const char* who) {
  throw std::invalid_argument(std::string("streamlike: ") + who +
                              ": a default stream (0, cudaStreamLegacy, cudaStreamPerThread) cannot be owned; "
                              "expected a handle from cudaStreamCreate*. For an immortal shared default stream "
                              "use shared_stream::legacy_default() or per_thread_default()");
}

namespace {

struct priority_range {
  int least = 0;
  int greatest = 0;
};

// The current device's stream priority range (`device`), asked of CUDA once per device: a fixed
// property of the device, and the most expensive of create_stream's checks (bench/stream_pool's
// diag rows). Remembered packed in one atomic word (a flag and two 16-bit priorities), so a
// create reads it with one load; threads that ask at once store the same answer. Devices past
// the cache's size, and ranges that do not fit (none does today), are asked every time.
priority_range priority_range_of(int device, const char* who) {
  const auto ask = [who] {
    priority_range range;
    throw_if_error(cudaDeviceGetStreamPriorityRange(&range.least, &range.greatest),
                   std::string(who) + ": cudaDeviceGetStreamPriorityRange");
    return range;
  };
  constexpr int cached_devices = 64;
  if (device >= cached_devices) return ask();
  // 0: not asked yet; else `present` with the least priority in bits 0-15, the greatest in 16-31.
  static std::atomic<std::uint64_t> known[cached_devices] = {};
  constexpr std::uint64_t present = 1ULL << 32;
  const auto priority_at = [](std::uint64_t packed, int shift) {
    return static_cast<int>(static_cast<std::int16_t>(static_cast<std::uint16_t>(packed >> shift)));
  };
  if (const std::uint64_t packed = known[device].load(std::memory_order_relaxed); packed != 0) [[likely]]
    return {priority_at(packed, 0), priority_at(packed, 16)};
  const priority_range range = ask(); // a failure throws and is asked again
  const auto fits = [](int priority) { return priority >= INT16_MIN && priority <= INT16_MAX; };
  if (fits(range.least) && fits(range.greatest)) {
    known[device].store(present | static_cast<std::uint16_t>(range.least) |
                            (static_cast<std::uint64_t>(static_cast<std::uint16_t>(range.greatest)) << 16),
                        std::memory_order_relaxed);
  }
  return range;
}

} // namespace

void check_priority(int priority, int device, const char* who) {
  const auto [least, greatest] = priority_range_of(device, who);
  if (priority < greatest || priority > least) {
    throw std::invalid_argument(std::string("streamlike: ") + who + ": priority " + std::to_string(priority) +
                                " is outside device " + std::to_string(device) + "'s range; expected " +
                                std::to_string(greatest) + " (highest) to " + std::to_string(least) + " (lowest)");
  }
}

namespace {

// A stream the driver made in the current context `ctx`: its device and primary context are the
// context's.
created_stream made_in(const cuda_context::current_context& ctx, CUstream handle, unsigned int flags,
                       int priority) noexcept {
  return {handle, ctx.device, flags, priority, true, ctx.primary_id, ctx.primary_id != 0 ? ctx.handle : nullptr};
}

// Every way that is not the driver's in the current context: a named device (checked, then its
// guard), a priority outside the device's range (refused), or the runtime's calls where the
// driver's cannot run (a thread without a current context yet, a reset primary context, a
// missing driver function), which make the context and report any failure. Out of line and
// cold, so that the common create's path stays a few cache lines of code.
[[gnu::noinline, gnu::cold]] created_stream create_stream_elsewhere(const stream_options& options, const char* who) {
  std::optional<device_guard> on_device;
  if (options.device) {
    devices::check_named(*options.device, who);
    on_device.emplace(*options.device); // one cudaGetDevice where it is current already
  }
  const unsigned int flags = options.non_blocking ? cudaStreamNonBlocking : cudaStreamDefault;
  const auto& drv = driver::get();
  cuda_context::current_context ctx;
  if (drv.stream_create_with_priority != nullptr && cuda_context::current(ctx) &&
      (!options.device || ctx.device == *options.device)) {
    check_priority(options.priority, ctx.device, who);
    CUstream handle = nullptr;
    if (drv.stream_create_with_priority(&handle, flags, options.priority) == CUDA_SUCCESS) {
      return made_in(ctx, handle, flags, options.priority);
    }
  }
  int device = 0;
  if (options.device) {
    device = *options.device;
  } else {
    device = devices::current(who);
  }
  check_priority(options.priority, device, who);
  cudaStream_t handle = nullptr;
  throw_if_error(cudaStreamCreateWithPriority(&handle, flags, options.priority),
                 std::string(who) + ": cudaStreamCreateWithPriority");
  return {handle, device, flags, options.priority, false, 0};
}

} // namespace

created_stream create_stream(const stream_options& options, const char* who) {
  // The common create: no device named and the default priority (0, in every device's range:
  // CUDA's default stream priority), by the driver in the current context (what the runtime's
  // call uses too). The context's id and device come with it, in place of cudaGetDevice now and
  // of the stream's context asked later.
  const auto& drv = driver::get();
  cuda_context::current_context ctx;
  if (!options.device && options.priority == 0 && drv.stream_create_with_priority != nullptr &&
      cuda_context::current(ctx)) [[likely]] {
    const unsigned int flags = options.non_blocking ? cudaStreamNonBlocking : cudaStreamDefault;
    CUstream handle = nullptr;
    if (drv.stream_create_with_priority(&handle, flags, 0) == CUDA_SUCCESS) [[likely]]
      return made_in(ctx, handle, flags, 0);
  }
  return create_stream_elsewhere(options, who);
}

namespace {

// A stream's id: the driver's cuStreamGetId where there is one (the runtime's call wraps it).
// Asked only of a stream that is not capturing.
void ask_id(cudaStream_t handle, stream_facts& facts) {
  const auto& drv = driver::get();
  if (drv.stream_get_id != nullptr && drv.stream_get_id(handle, &facts.id) == CUDA_SUCCESS) [[likely]]
    return;
  throw_if_error(cudaStreamGetId(handle, &facts.id), "cudaStreamGetId");
}

// What only CUDA can say of a stream whose device is known: its id and primary context.
void ask_id_and_context(cudaStream_t handle, stream_facts& facts) {
  ask_id(handle, facts);
  facts.primary_context_id = cuda_context::primary_or_zero(cuda_context::id_of(handle), facts.device);
}

} // namespace

stream_facts facts_of_created(const created_stream& created) {
  stream_facts facts;
  facts.device = created.device;
  facts.flags = created.flags;
  facts.priority = created.priority;
  if (created.context_known) {
    ask_id(created.handle, facts);
    facts.primary_context_id = created.primary_context_id;
  } else {
    ask_id_and_context(created.handle, facts);
  }
  // Made in its device's primary context, which is never a green context: every SM of the device.
  facts.partition_known = facts.primary_context_id != 0;
  return facts;
}

stream_facts query_facts(cudaStream_t handle, const char* type, const char* operation) {
  stream_facts facts;
  // The id and the flags have no capture-safe query: a capturing stream is refused before them.
  capture::refuse_if_capturing(handle, type, operation,
                               "asking its id and flags (cudaStreamGetId, cudaStreamGetFlags)");
  // A failure names the operation that asked ("shared_stream::device: cudaStreamGetDevice"), the
  // name built only then.
  const auto check = [&](cudaError_t code, const char* call) {
    if (code != cudaSuccess) [[unlikely]]
      throw_error_of(code, type, std::string(operation) + ": " + call);
  };
  check(cudaStreamGetDevice(handle, &facts.device), "cudaStreamGetDevice");
  check(cudaStreamGetFlags(handle, &facts.flags), "cudaStreamGetFlags");
  check(cudaStreamGetPriority(handle, &facts.priority), "cudaStreamGetPriority");
  ask_id_and_context(handle, facts);
  return facts;
}

bool destroy_if_context_current(cudaStream_t handle, unsigned long long context_id) noexcept {
  if (context_id == 0) return false;
  const auto& drv = driver::get();
  if (drv.stream_destroy == nullptr) return false;
  // The current context is the one with that id, so it lives (ids are never reused): the stream
  // is alive and in the current context, where the runtime's destroy would work too. A primary
  // context that cudaDeviceReset left uninitialized (and still current) has no id to compare:
  // cuCtxGetId answers CUDA_ERROR_CONTEXT_IS_DESTROYED, so current_id() is 0; once made again it
  // has a new id (measured on CUDA 13, the oldest driver this library runs on; the GPU suite's
  // test/gpu/device_reset.cu drops streams across resets).
  if (cuda_context::current_id() != context_id) return false;
  // A refused destroy leaves the stream alive: false, so that the caller's guarded path (the
  // runtime's destroy on the stream's device) tries again and the stream does not leak unseen.
  return drv.stream_destroy(handle) == CUDA_SUCCESS;
}

bool destroy_if_primary_context_alive(cudaStream_t handle, CUcontext primary, unsigned long long primary_id) noexcept {
  if (primary == nullptr || primary_id == 0) return false;
  const auto& drv = driver::get();
  if (drv.ctx_get_id == nullptr || drv.stream_destroy == nullptr) return false;
  // A primary context's handle lasts as long as the driver: cudaDeviceReset uninitializes the
  // context, not its handle, which cuCtxGetId then answers with CUDA_ERROR_CONTEXT_IS_DESTROYED,
  // and with a new id once the context is made again (measured on CUDA 13 on the H200,
  // test/gpu/device_reset.cu). So the recorded id proves the stream's context alive without making
  // it current. That cuStreamDestroy then succeeds whatever context is current is what
  // test/gpu/multi_gpu.cu checks (a stream of device 1 dropped with device 0 current, its destroy
  // counted and required to succeed); it needs two GPUs and has not run on two yet (docs/
  // sanitizers.md). Until it has, nothing rests on it: a refused destroy returns false, and the
  // caller's guarded path (the runtime's destroy with the stream's device current) runs.
  unsigned long long id = 0;
  if (drv.ctx_get_id(primary, &id) != CUDA_SUCCESS || id != primary_id) return false;
  return drv.stream_destroy(handle) == CUDA_SUCCESS;
}

void destroy_stream_on_device(cudaStream_t handle, int device) noexcept {
  const nothrow_device_guard on_device(device);
  // The runtime is unloading (process exit) or the driver is gone: the stream went with them.
  if (!on_device) return;
  if (cudaStreamDestroy(handle) != cudaSuccess) (void)cudaGetLastError();
}

void destroy_stream(cudaStream_t handle) noexcept {
  // The stream's context is current (the common case: dropped where it was made): the driver's
  // destroy, in place of the runtime's device guard and destroy around it.
  const auto& drv = driver::get();
  if (drv.stream_destroy != nullptr && drv.stream_get_ctx != nullptr && drv.ctx_get_current != nullptr) {
    CUcontext ctx = nullptr;
    CUcontext current = nullptr;
    if (drv.stream_get_ctx(handle, &ctx) == CUDA_SUCCESS && ctx != nullptr &&
        drv.ctx_get_current(&current) == CUDA_SUCCESS && current == ctx) [[likely]] {
      if (drv.stream_destroy(handle) == CUDA_SUCCESS) [[likely]]
        return;
      // Refused: the stream is still alive; the guarded path below tries the runtime's destroy.
    }
  }
  // Through the context: cudaStreamGetDevice would invalidate a capture the stream is still in.
  destroy_stream_on_device(handle, devices::of_or_minus_one(handle));
}

} // namespace streamlike::detail
