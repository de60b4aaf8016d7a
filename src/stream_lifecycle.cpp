#include "stream_lifecycle.hpp"

#include "capture_checks.hpp"
#include "cuda_context.hpp"
#include "nothrow_device_guard.hpp"

#include <streamlike/detail/benchmark_floor.hpp>
#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>

#include <atomic>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

namespace streamlike::detail {
namespace {

// The device count, asked of CUDA until it first answers, then remembered: it is fixed for the
// process (CUDA_VISIBLE_DEVICES is read once, at initialization).
int device_count(const char* who) {
  static std::atomic<int> known{0};
  if (const int count = known.load(std::memory_order_relaxed); count > 0) return count;
  int count = 0;
  throw_if_error(cudaGetDeviceCount(&count), std::string(who) + ": cudaGetDeviceCount");
  known.store(count, std::memory_order_relaxed);
  return count;
}

struct chosen_device {
  int device;
  bool is_current; // no device guard needed
};

// The device to create on: the one named (which must exist), or the current one, which exists
// (cudaGetDevice answered), so the default path costs one runtime call.
chosen_device checked_device(const stream_options& options, const char* who) {
  if (!options.device) {
    int device = 0;
    throw_if_error(cudaGetDevice(&device), std::string(who) + ": cudaGetDevice");
    return {device, true};
  }
  const int device = *options.device;
  if (device < 0 || device >= device_count(who)) {
    const int count = device_count(who);
    throw std::invalid_argument(std::string("streamlike: ") + who + ": device " + std::to_string(device) +
                                " does not exist; expected 0.." + std::to_string(count - 1) + " (" +
                                std::to_string(count) + " device(s))");
  }
  return {device, false};
}

} // namespace

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
// diag rows). Devices past the cache's size are asked every time.
priority_range priority_range_of(int device, const char* who) {
  const auto ask = [who] {
    priority_range range;
    throw_if_error(cudaDeviceGetStreamPriorityRange(&range.least, &range.greatest),
                   std::string(who) + ": cudaDeviceGetStreamPriorityRange");
    return range;
  };
  constexpr int cached_devices = 64;
  if (device >= cached_devices) return ask();
  static std::once_flag asked[cached_devices];
  static priority_range ranges[cached_devices];
  std::call_once(asked[device], [&] { ranges[device] = ask(); }); // a failure throws and is asked again
  return ranges[device];
}

} // namespace

created_stream create_stream(const stream_options& options, const char* who) {
  const auto [device, is_current] = checked_device(options, who);
  std::optional<device_guard> on_device;
  if (!is_current) on_device.emplace(device);
  const auto [least, greatest] = priority_range_of(device, who);
  if (options.priority < greatest || options.priority > least) {
    throw std::invalid_argument(std::string("streamlike: ") + who + ": priority " + std::to_string(options.priority) +
                                " is outside device " + std::to_string(device) + "'s range; expected " +
                                std::to_string(greatest) + " (highest) to " + std::to_string(least) + " (lowest)");
  }
  const unsigned int flags = options.non_blocking ? cudaStreamNonBlocking : cudaStreamDefault;
  cudaStream_t handle = nullptr;
  throw_if_error(cudaStreamCreateWithPriority(&handle, flags, options.priority),
                 std::string(who) + ": cudaStreamCreateWithPriority");
  return {handle, device, flags, options.priority};
}

namespace {

// The id of `device`'s primary context if `context_id` is it, else 0. A context id equal to the
// one last found primary on the device is that context, alive (a stream was just made or found in
// it) and therefore still the primary one: the driver's retain, query and release of the primary
// context (cuda_context::primary_id, the largest part of the facts' cost) are then skipped. A miss
// (another context, or a new primary context after cudaDeviceReset) asks them and remembers.
unsigned long long primary_context_of(unsigned long long context_id, int device) {
  constexpr int cached_devices = 64;
  static std::atomic<unsigned long long> known[cached_devices] = {};
  const bool cached = device >= 0 && device < cached_devices;
  if (context_id != 0 && cached && known[device].load(std::memory_order_relaxed) == context_id) return context_id;
  const unsigned long long primary = cuda_context::primary_or_zero(context_id, device);
  if (primary != 0 && cached) known[device].store(primary, std::memory_order_relaxed);
  return primary;
}

// What only CUDA can say of a stream whose device is known: its id and primary context.
void ask_id_and_context(cudaStream_t handle, stream_facts& facts) {
  throw_if_error(cudaStreamGetId(handle, &facts.id), "cudaStreamGetId");
  facts.primary_context_id = primary_context_of(cuda_context::id_of(handle), facts.device);
}

} // namespace

stream_facts facts_of_created(const created_stream& created) {
  stream_facts facts;
  facts.device = created.device;
  facts.flags = created.flags;
  facts.priority = created.priority;
  ask_id_and_context(created.handle, facts);
  return facts;
}

stream_facts query_facts(cudaStream_t handle, const char* type, const char* operation) {
  stream_facts facts;
  // The id and the flags have no capture-safe query: a capturing stream is refused before them.
  capture::refuse_if_capturing(handle, type, operation,
                               "asking its id and flags (cudaStreamGetId, cudaStreamGetFlags)");
  throw_if_error(cudaStreamGetDevice(handle, &facts.device), "cudaStreamGetDevice");
  throw_if_error(cudaStreamGetFlags(handle, &facts.flags), "cudaStreamGetFlags");
  throw_if_error(cudaStreamGetPriority(handle, &facts.priority), "cudaStreamGetPriority");
  ask_id_and_context(handle, facts);
  return facts;
}

void destroy_stream_on_device(cudaStream_t handle, int device) noexcept {
  const nothrow_device_guard on_device(device);
  // The runtime is unloading (process exit) or the driver is gone: the stream went with them.
  if (!on_device) return;
  if (cudaStreamDestroy(handle) != cudaSuccess) (void)cudaGetLastError();
}

void destroy_stream(cudaStream_t handle) noexcept {
  // Through the context: cudaStreamGetDevice would invalidate a capture the stream is still in.
  destroy_stream_on_device(handle, cuda_context::device_of_or_minus_one(handle));
}

} // namespace streamlike::detail

namespace streamlike::detail {

void create_and_destroy_raw_stream() {
  cudaStream_t handle = nullptr;
  throw_if_error(cudaStreamCreateWithPriority(&handle, cudaStreamNonBlocking, 0),
                 "create_and_destroy_raw_stream: cudaStreamCreateWithPriority");
  throw_if_error(cudaStreamDestroy(handle), "create_and_destroy_raw_stream: cudaStreamDestroy");
}

} // namespace streamlike::detail
