#include "capture_checks.hpp"

#include "partition_streams.hpp"

#include <streamlike/error.hpp>
#include <streamlike/partition.hpp>
#include <streamlike/stream_pool.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace streamlike {

namespace detail {
// The streams made in one green context, found by its context's id. A borrowed one (its partition
// does not own the green context) may outlive its green context, whose owner destroys it: the entry
// is dropped then (stream_pool::get_for), but stays, with its id, in the tables a reader may still
// scan; no caller's stream can have that id again.
struct sub_pool {
  unsigned long long context_id = 0;
  CUctx_st* context = nullptr; // the green context's own context, as cuStreamGetCtx names it
  CUgreenCtx_st* green_context = nullptr;
  bool borrowed = false;
  std::vector<shared_stream> streams; // moved out, under the pool's lock, once a borrowed green context is gone
};

namespace {
// The streams of green contexts that are gone. CUDA leaves such streams alive, and using them,
// destroying included, undefined (cuGreenCtxDestroy): they are kept for the life of the process,
// reachable, never destroyed.
void abandon(std::vector<shared_stream>&& streams) {
  static std::mutex lock;
  static auto* const kept = new std::vector<shared_stream>; // never destroyed, as the streams
  const std::lock_guard guard(lock);
  for (shared_stream& s : streams) kept->push_back(std::move(s));
  streams.clear();
}
} // namespace
} // namespace detail

struct stream_pool::sub_pools {
  std::vector<std::shared_ptr<detail::sub_pool>> by_context; // shared by the tables that follow
  std::unique_ptr<const sub_pools> replaced;                 // the table this one replaced, kept for its readers

  /// The sub-pool of the context `id`, or nullptr.
  const detail::sub_pool* find(unsigned long long id) const noexcept {
    for (const auto& known : by_context)
      if (known->context_id == id) return known.get();
    return nullptr;
  }
  /// The sub-pool of a partition this process owns whose context is `context`, or nullptr. Its
  /// streams keep their partition, so its green context, alive: that handle cannot name another
  /// context while the entry exists, and needs no id. A borrowed one can (its owner destroys it).
  const detail::sub_pool* find_owned(CUctx_st* context) const noexcept {
    for (const auto& known : by_context)
      if (!known->borrowed && known->context == context) return known.get();
    return nullptr;
  }
};

stream_pool::~stream_pool() { delete sub_pools_.load(std::memory_order_acquire); }

stream_pool::stream_pool(std::size_t size, const stream_options& options) {
  if (size == 0) {
    throw std::invalid_argument("streamlike: stream_pool: size 0; expected at least one stream (the default is 16)");
  }
  streams_.reserve(size);
  for (std::size_t i = 0; i < size; ++i) streams_.push_back(shared_stream::create(options));
  device_ = streams_.front().device();
  priority_ = options.priority;
}

shared_stream stream_pool::get_for(stream_view caller) {
  constexpr const char* who = "stream_pool::get_for";
  // The caller's context: by its handle where that handle cannot name another context (the pool's
  // own, which its streams keep; an owned partition's), else by id, which is never reused.
  CUctx_st* const context = detail::context_of(caller, who);
  CUctx_st* pool_context = context_.load(std::memory_order_relaxed);
  if (pool_context == nullptr) [[unlikely]] {
    pool_context = detail::context_of(streams_.front().get(), who);
    context_.store(pool_context, std::memory_order_relaxed);
  }
  if (context == pool_context) return get(); // the common plain case: the pool's own context
  const std::size_t next = next_.fetch_add(1, std::memory_order_relaxed);
  const sub_pools* table = sub_pools_.load(std::memory_order_acquire);
  if (table != nullptr) [[likely]] {
    if (const auto* found = table->find_owned(context)) return found->streams[next % found->streams.size()];
  }
  const unsigned long long id = detail::id_of_context(context, who);
  if (table != nullptr) {
    if (const auto* found = table->find(id)) return found->streams[next % found->streams.size()];
  }
  return get_for_new_context(caller, context, id, next);
}

shared_stream stream_pool::get_for_new_context(stream_view caller, CUctx_st* context, unsigned long long id,
                                               std::size_t next) {
  constexpr const char* who = "stream_pool::get_for";
  CUgreenCtx_st* const green = detail::green_context_of(caller, who);
  if (green == nullptr) { // a plain stream of another context: of the pool's device, or refused
    check_device_of(caller, nullptr);
    return get();
  }
  const std::lock_guard lock(sub_pools_lock_);
  const sub_pools* latest = sub_pools_.load(std::memory_order_relaxed);
  if (latest != nullptr) {
    if (const auto* found = latest->find(id)) return found->streams[next % found->streams.size()]; // made meanwhile
  }
  const partition on = detail::partition_of_green_context(green, id);
  if (on.device() != device_) check_device_of(caller, &on); // throws, naming the device
  auto added = std::make_shared<detail::sub_pool>();
  added->context_id = id;
  added->context = context;
  added->green_context = green;
  added->borrowed = !on.owned();
  added->streams.reserve(streams_.size());
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    added->streams.push_back(shared_stream::create({.priority = priority_, .partition = on}));
  }
  // Only once all are made: a failure leaves no sub-pool, and the next call tries again. The
  // borrowed sub-pools whose green context is gone are left out, their streams abandoned.
  auto table = std::make_unique<sub_pools>();
  if (latest != nullptr) {
    for (const auto& known : latest->by_context) {
      if (known->borrowed && !detail::green_context_alive(known->green_context, known->context_id)) {
        detail::abandon(std::move(known->streams)); // no caller's stream has its id any more: no reader takes from it
        continue;
      }
      table->by_context.push_back(known);
    }
  }
  table->by_context.push_back(added);
  table->replaced.reset(latest);
  sub_pools_.store(table.release(), std::memory_order_release);
  return added->streams[next % added->streams.size()];
}

void stream_pool::check_device_of(stream_view caller, const partition* green) const {
  const int device = green != nullptr ? green->device() : partition_of(caller).device;
  if (device == device_) return;
  if (green != nullptr) {
    throw std::invalid_argument(
        "streamlike: stream_pool::get_for: a green stream of device " + std::to_string(device) + " (a partition of " +
        std::to_string(green->sm_count()) + " SMs); expected a stream of the pool's device " + std::to_string(device_) +
        " (a pool makes its sub-pools on its own device: use a pool of device " + std::to_string(device) + ")");
  }
  throw std::invalid_argument("streamlike: stream_pool::get_for: a stream of device " + std::to_string(device) +
                              "; expected one of the pool's device " + std::to_string(device_));
}

shared_stream stream_pool::get_non_capturing() {
  for (std::size_t tried = 0; tried < streams_.size(); ++tried) {
    const shared_stream& candidate = streams_[next_.fetch_add(1, std::memory_order_relaxed) % streams_.size()];
    if (detail::capture::status_of(candidate.get(), "stream_pool", "get_non_capturing") ==
        cudaStreamCaptureStatusNone) {
      return candidate;
    }
  }
  throw error(cudaErrorStreamCaptureUnsupported, "stream_pool::get_non_capturing",
              "every one of the pool's " + std::to_string(streams_.size()) +
                  " streams is in a CUDA graph capture; expected at least one that is not (end a capture, or "
                  "use a larger pool)");
}

} // namespace streamlike
