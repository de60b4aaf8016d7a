// Partitions (include/streamlike/partition.hpp) and the green-context streams made on them
// (src/partition_streams.hpp). Every driver call goes through driver_entry_points.hpp: the
// library links no libcuda, and a driver without green contexts is reported, not a load failure.
#include "partition_streams.hpp"

#include "devices.hpp"
#include "driver_entry_points.hpp"
#include "error_messages.hpp"
#include "spin_lock.hpp"
#include "stream_lifecycle.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>
#include <streamlike/partition.hpp>

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace streamlike {
namespace detail {

/// What every copy of a partition shares. Made only once the driver has described the green
/// context; destroys it (when owned) with the last copy.
struct partition_state {
  CUgreenCtx green = nullptr;
  CUcontext context = nullptr; // cuCtxFromGreenCtx: what a green stream's cuStreamGetCtx answers
  int device = -1;
  unsigned int sm_count = 0;
  unsigned long long id = 0;
  bool owned = false;

  partition_state() = default;
  partition_state(const partition_state&) = delete;
  partition_state& operator=(const partition_state&) = delete;
  ~partition_state();
};

namespace {

// The driver's codes for the calls used here are the runtime's (CUDA keeps the two numbered
// alike: CUDA_ERROR_INVALID_VALUE is cudaErrorInvalidValue, CUDA_ERROR_INVALID_RESOURCE_
// CONFIGURATION is cudaErrorInvalidResourceConfiguration), so streamlike::error names them.
[[noreturn, gnu::cold, gnu::noinline]] void throw_driver_error(CUresult code, const char* who, const char* call) {
  throw error(static_cast<cudaError_t>(code), std::string(who) + ": " + call);
}

// Inline, with the throw out of line: a green stream's create and destroy cost what the driver's
// do, and the code they run is part of that cost.
void check(CUresult code, const char* who, const char* call) {
  if (code != CUDA_SUCCESS) [[unlikely]]
    throw_driver_error(code, who, call);
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_no_green_contexts(const char* who, const char* call) {
  throw error(cudaErrorNotSupported, std::string(who) + ": " + call,
              "the CUDA driver has no green contexts; expected a driver for CUDA 13 or newer");
}

// The entry point, or streamlike::error naming `who` and the missing call.
template <class Fn>
Fn require(Fn fn, const char* who, const char* call) {
  if (fn == nullptr) [[unlikely]]
    throw_no_green_contexts(who, call);
  return fn;
}

// The live partitions by their context's id, so that a green context met on a stream (get_for) is
// shared with the partition that made it rather than borrowed. By id, not by handle: a green
// context destroyed by its owner (one that was borrowed) leaves its handle free for the next one,
// while a context id is never given twice.
std::mutex registry_lock;
std::map<unsigned long long, std::weak_ptr<const partition_state>>& registry() {
  static auto* live = new std::map<unsigned long long, std::weak_ptr<const partition_state>>; // outlives statics
  return *live;
}

std::shared_ptr<const partition_state> describe(CUgreenCtx green, bool owned, const char* who) {
  const auto& drv = driver::get();
  auto state = std::make_shared<partition_state>();
  state->green = green;
  check(require(drv.ctx_from_green_ctx, who, "cuCtxFromGreenCtx")(&state->context, green), who, "cuCtxFromGreenCtx");
  check(require(drv.ctx_get_id, who, "cuCtxGetId")(state->context, &state->id), who, "cuCtxGetId");
  CUdevice device = 0;
  check(require(drv.ctx_get_device, who, "cuCtxGetDevice")(&device, state->context), who, "cuCtxGetDevice");
  state->device = static_cast<int>(device);
  CUdevResource sms{};
  check(require(drv.green_ctx_get_dev_resource, who, "cuGreenCtxGetDevResource")(green, &sms, CU_DEV_RESOURCE_TYPE_SM),
        who, "cuGreenCtxGetDevResource");
  state->sm_count = sms.sm.smCount;
  state->owned = owned; // from here on the state destroys it
  const std::lock_guard lock(registry_lock);
  if (auto& slot = registry()[state->id]; slot.expired()) slot = state; // the first live one stays found
  return state;
}

void check_green_handle(CUgreenCtx green, const char* who) {
  if (green == nullptr) {
    throw std::invalid_argument(std::string("streamlike: ") + who +
                                ": a null green context; expected one from cuGreenCtxCreate (or a framework's)");
  }
}

} // namespace

partition_state::~partition_state() {
  {
    const std::lock_guard lock(registry_lock);
    auto& live = registry();
    if (auto it = live.find(id); it != live.end() && it->second.expired()) live.erase(it);
  }
  if (owned) {
    if (const auto destroy = driver::get().green_ctx_destroy) (void)destroy(green); // never throws
  }
}

struct partition_access {
  static partition make(std::shared_ptr<const partition_state> state) noexcept { return partition(std::move(state)); }
  static const partition_state& state(const partition& p, const char* operation) { return p.state(operation); }
};

} // namespace detail

partition partition::create(int device, unsigned int sm_count) {
  constexpr const char* who = "partition::create";
  if (sm_count == 0) {
    throw std::invalid_argument("streamlike: partition::create: sm_count 0; expected at least one SM (the driver "
                                "rounds it up to its partition granularity)");
  }
  detail::devices::check_named(device, who);
  const auto& drv = detail::driver::get();
  CUdevResource all{};
  detail::check(detail::require(drv.device_get_dev_resource, who,
                                "cuDeviceGetDevResource")(static_cast<CUdevice>(device), &all, CU_DEV_RESOURCE_TYPE_SM),
                who, "cuDeviceGetDevResource");
  if (sm_count > all.sm.smCount) {
    throw std::invalid_argument("streamlike: partition::create: sm_count " + std::to_string(sm_count) +
                                " is more than device " + std::to_string(device) + "'s " +
                                std::to_string(all.sm.smCount) + " SMs; expected 1.." + std::to_string(all.sm.smCount));
  }
  CUdevResource group{};
  unsigned int groups = 1;
  detail::check(detail::require(drv.dev_sm_resource_split_by_count, who,
                                "cuDevSmResourceSplitByCount")(&group, &groups, &all, nullptr, 0, sm_count),
                who, "cuDevSmResourceSplitByCount");
  if (groups == 0) {
#if CUDART_VERSION >= 13000
    // CUDA 13 reports the granularity; CUDA 12's CUdevSmResource has the SM count alone.
    const std::string granularity = " (minSmPartitionSize " + std::to_string(all.sm.minSmPartitionSize) +
                                    ", alignment " + std::to_string(all.sm.smCoscheduledAlignment) + ")";
#else
    const std::string granularity;
#endif
    throw error(cudaErrorInvalidResourceConfiguration, "partition::create: cuDevSmResourceSplitByCount",
                "no group of " + std::to_string(sm_count) + " SMs fits device " + std::to_string(device) +
                    "'s granularity" + granularity);
  }
  CUdevResourceDesc desc = nullptr;
  detail::check(detail::require(drv.dev_resource_generate_desc, who, "cuDevResourceGenerateDesc")(&desc, &group, 1),
                who, "cuDevResourceGenerateDesc");
  CUgreenCtx green = nullptr;
  detail::check(detail::require(drv.green_ctx_create, who, "cuGreenCtxCreate")(
                    &green, desc, static_cast<CUdevice>(device), CU_GREEN_CTX_DEFAULT_STREAM),
                who, "cuGreenCtxCreate");
  try {
    return partition(detail::describe(green, true, who));
  } catch (...) { // ours until its state exists
    if (drv.green_ctx_destroy != nullptr) (void)drv.green_ctx_destroy(green);
    throw;
  }
}

partition partition::adopt(CUgreenCtx_st* green_context) {
  detail::check_green_handle(green_context, "partition::adopt");
  return partition(detail::describe(green_context, true, "partition::adopt"));
}

partition partition::borrow(CUgreenCtx_st* green_context) {
  detail::check_green_handle(green_context, "partition::borrow");
  return partition(detail::describe(green_context, false, "partition::borrow"));
}

const detail::partition_state& partition::state(const char* operation) const {
  if (state_ == nullptr) {
    detail::throw_empty("partition", operation, "default-constructed or moved-from",
                        "one from partition::create, adopt or borrow");
  }
  return *state_;
}

int partition::device() const { return state("device").device; }
unsigned int partition::sm_count() const { return state("sm_count").sm_count; }
unsigned long long partition::id() const { return state("id").id; }
unsigned long long partition::id_or_zero() const noexcept { return state_ != nullptr ? state_->id : 0; }
CUgreenCtx_st* partition::green_context() const { return state("green_context").green; }
bool partition::owned() const { return state("owned").owned; }

partition_info partition_of(stream_view stream) {
  constexpr const char* who = "partition_of";
  const auto& drv = detail::driver::get();
  const CUstream handle = stream.get();
  partition_info info;
  // cuStreamGetCtx: measured capture-safe (docs/cuda-graphs.md); for a green stream it answers
  // the green context's CUcontext (cuCtxFromGreenCtx's), whose id is the partition's.
  CUcontext context = nullptr;
  detail::check(detail::require(drv.stream_get_ctx, who, "cuStreamGetCtx")(handle, &context), who, "cuStreamGetCtx");
  detail::check(detail::require(drv.ctx_get_id, who, "cuCtxGetId")(context, &info.context_id), who, "cuCtxGetId");
  CUdevice device = 0;
  detail::check(detail::require(drv.ctx_get_device, who, "cuCtxGetDevice")(&device, context), who, "cuCtxGetDevice");
  info.device = static_cast<int>(device);
  CUgreenCtx green = nullptr;
  if (drv.stream_get_green_ctx != nullptr) { // a driver without green contexts has only plain streams
    detail::check(drv.stream_get_green_ctx(handle, &green), who, "cuStreamGetGreenCtx");
  }
  CUdevResource sms{};
  if (green != nullptr) {
    info.green = true;
    info.green_context = green;
    detail::check(detail::require(drv.green_ctx_get_dev_resource, who,
                                  "cuGreenCtxGetDevResource")(green, &sms, CU_DEV_RESOURCE_TYPE_SM),
                  who, "cuGreenCtxGetDevResource");
  } else if (drv.ctx_get_dev_resource != nullptr) {
    detail::check(drv.ctx_get_dev_resource(context, &sms, CU_DEV_RESOURCE_TYPE_SM), who, "cuCtxGetDevResource");
  } else if (drv.device_get_dev_resource != nullptr) {
    detail::check(drv.device_get_dev_resource(device, &sms, CU_DEV_RESOURCE_TYPE_SM), who, "cuDeviceGetDevResource");
  }
  info.sm_count = sms.sm.smCount; // 0 where the driver cannot tell (no resource queries)
  return info;
}

namespace detail {

namespace {
[[noreturn, gnu::cold, gnu::noinline]] void refuse_green_options(const stream_options& options, int device,
                                                                 const char* who) {
  if (options.device && *options.device != device) {
    throw std::invalid_argument(std::string("streamlike: ") + who + ": device " + std::to_string(*options.device) +
                                " with a partition of device " + std::to_string(device) +
                                "; expected the partition's device or none");
  }
  throw std::invalid_argument(std::string("streamlike: ") + who +
                              ": a blocking stream on a partition; expected non_blocking (cuGreenCtxStreamCreate "
                              "makes only streams that do not synchronize with the legacy default stream)");
}
} // namespace

green_stream create_green_stream(const stream_options& options, const char* who) {
  // The partition's state, checked once (throws for an empty partition, as its device() does),
  // rather than through one checked accessor per field.
  const partition_state& on = partition_access::state(*options.partition, "device");
  if ((options.device && *options.device != on.device) || !options.non_blocking) [[unlikely]]
    refuse_green_options(options, on.device, who);
  if (options.priority != 0) { // 0 is in every device's range
    const device_guard on_device(on.device);
    check_priority(options.priority, on.device, who);
  }
  const auto create = require(driver::get().green_ctx_stream_create, who, "cuGreenCtxStreamCreate");
  green_stream made;
  check(create(&made.handle, on.green, CU_STREAM_NON_BLOCKING, options.priority), who, "cuGreenCtxStreamCreate");
  made.facts.device = on.device;
  made.facts.flags = cudaStreamNonBlocking;
  made.facts.priority = options.priority;
  made.facts.primary_context_id = 0; // a green context's stream: its partition keeps it alive
  made.facts.partition_known = true;
  made.facts.green_context = on.green;
  made.facts.sm_count = on.sm_count;
  return made;
}

void ask_green_stream_id(green_stream& made, const char* who) {
  const auto get_id = driver::get().stream_get_id;
  const CUresult asked = get_id != nullptr ? get_id(made.handle, &made.facts.id) : CUDA_ERROR_NOT_SUPPORTED;
  if (asked != CUDA_SUCCESS) [[unlikely]] {
    destroy_green_stream(made.handle, made.facts.device);
    check(asked, who, "cuStreamGetId");
  }
}

void destroy_green_stream(cudaStream_t handle, int device) noexcept {
  // cuStreamDestroy needs no current context; the runtime's on its device where it is missing.
  if (const auto destroy = driver::get().stream_destroy; destroy != nullptr && destroy(handle) == CUDA_SUCCESS) return;
  destroy_stream_on_device(handle, device);
}

namespace {
// The partitions of the unique_streams made on one, by handle, with the device each stream's
// destroy needs: searched from the newest, as streams are mostly dropped in the reverse order of
// their making, so that case costs one comparison. The vector keeps its capacity, so making and
// dropping one at a time allocates nothing, and a dropped entry's partition is moved out, so no
// spare slot keeps a green context alive.
struct kept_partition {
  cudaStream_t handle;
  int device;
  partition held;
};
struct kept_table {
  spin_lock lock;
  std::atomic<std::size_t> count{0}; // entries' size, written under the lock, read without it
  std::vector<kept_partition> entries;
};
// Constant-initialized and never destroyed: a unique_stream dropped by another static's destructor
// still finds its entry, and the table costs no guard on each use.
union never_destroyed_kept_table {
  kept_table table;
  constexpr never_destroyed_kept_table() : table() {}
  ~never_destroyed_kept_table() {}
};
constinit never_destroyed_kept_table kept_storage;

auto find_kept(std::vector<kept_partition>& in, cudaStream_t handle) {
  return std::find_if(in.rbegin(), in.rend(), [handle](const kept_partition& k) { return k.handle == handle; });
}
} // namespace

void keep_partition_of(cudaStream_t handle, int device, partition&& p) {
  kept_table& kept = kept_storage.table;
  const std::lock_guard lock(kept.lock);
  if (const auto found = find_kept(kept.entries, handle); found != kept.entries.rend()) {
    found->device = device; // the handle was kept already (a stream the driver destroyed behind a unique_stream)
    found->held = std::move(p);
    return;
  }
  kept.entries.push_back({handle, device, std::move(p)});
  kept.count.store(kept.entries.size(), std::memory_order_relaxed);
}

bool destroy_if_kept_partition(cudaStream_t handle) noexcept {
  kept_table& kept = kept_storage.table;
  if (kept.count.load(std::memory_order_relaxed) == 0) [[likely]]
    return false;
  partition released; // dropped last: its last copy may destroy the green context
  int device = -1;
  {
    const std::lock_guard lock(kept.lock);
    const auto found = find_kept(kept.entries, handle);
    if (found == kept.entries.rend()) return false;
    device = found->device;
    released = std::move(found->held);
    if (kept_partition& last = kept.entries.back(); &*found != &last) *found = std::move(last);
    kept.entries.pop_back();
    kept.count.store(kept.entries.size(), std::memory_order_relaxed);
  }
  destroy_green_stream(handle, device);
  return true;
}

CUgreenCtx_st* green_context_of(stream_view stream, const char* who) {
  const auto get_green = driver::get().stream_get_green_ctx;
  CUgreenCtx green = nullptr;
  if (get_green != nullptr) check(get_green(stream.get(), &green), who, "cuStreamGetGreenCtx");
  return green;
}

CUctx_st* context_of(stream_view stream, const char* who) {
  // cuStreamGetCtx answers a green stream's green context's own CUcontext (cuCtxFromGreenCtx's),
  // whose id is its partition's; both calls are measured capture-safe (docs/cuda-graphs.md).
  CUcontext context = nullptr;
  check(require(driver::get().stream_get_ctx, who, "cuStreamGetCtx")(stream.get(), &context), who, "cuStreamGetCtx");
  return context;
}

unsigned long long id_of_context(CUctx_st* context, const char* who) {
  unsigned long long id = 0;
  check(require(driver::get().ctx_get_id, who, "cuCtxGetId")(context, &id), who, "cuCtxGetId");
  return id;
}

unsigned long long context_id_of(stream_view stream, const char* who) {
  return id_of_context(context_of(stream, who), who);
}

bool green_context_alive(CUgreenCtx_st* green_context, unsigned long long context_id) noexcept {
  const auto& drv = driver::get();
  if (drv.ctx_from_green_ctx == nullptr || drv.ctx_get_id == nullptr) return false;
  CUcontext context = nullptr;
  unsigned long long id = 0;
  return drv.ctx_from_green_ctx(&context, green_context) == CUDA_SUCCESS &&
         drv.ctx_get_id(context, &id) == CUDA_SUCCESS && id == context_id;
}

partition partition_of_green_context(CUgreenCtx_st* green_context, unsigned long long context_id) {
  {
    const std::lock_guard lock(registry_lock);
    if (auto it = registry().find(context_id); it != registry().end()) {
      if (auto live = it->second.lock()) return partition_access::make(std::move(live));
    }
  }
  return partition::borrow(green_context);
}

} // namespace detail
} // namespace streamlike
