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

struct stream_pool::sub_pools {
  std::vector<std::pair<CUgreenCtx_st*, std::vector<shared_stream>>> by_green_context;
  std::unique_ptr<const sub_pools> replaced; // the table this one replaced, kept for its readers

  /// The sub-pool of `green`, or nullptr.
  const std::vector<shared_stream>* find(CUgreenCtx_st* green) const noexcept {
    for (const auto& [known, streams] : by_green_context)
      if (known == green) return &streams;
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
  const detail::stream_contexts where = detail::contexts_of(caller, who);
  CUgreenCtx_st* const green = where.green_context;
  if (green == nullptr) {
    // A plain stream: the pool's own context is the common case, else its device must be the pool's.
    void* pool_context = context_.load(std::memory_order_relaxed);
    if (pool_context == nullptr) {
      pool_context = detail::context_of(streams_.front().get(), who);
      context_.store(pool_context, std::memory_order_relaxed);
    }
    if (where.context != pool_context) check_device_of(caller);
    return get();
  }
  const std::size_t next = next_.fetch_add(1, std::memory_order_relaxed);
  if (const sub_pools* table = sub_pools_.load(std::memory_order_acquire)) [[likely]] {
    if (const auto* streams = table->find(green)) return (*streams)[next % streams->size()];
  }
  const std::lock_guard lock(sub_pools_lock_);
  const sub_pools* latest = sub_pools_.load(std::memory_order_relaxed);
  if (latest != nullptr) {
    if (const auto* streams = latest->find(green)) return (*streams)[next % streams->size()]; // made meanwhile
  }
  const partition on = detail::partition_of_green_context(green);
  if (on.device() != device_) check_device_of(caller); // throws, naming the device
  std::vector<shared_stream> made;
  made.reserve(streams_.size());
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    made.push_back(shared_stream::create({.priority = priority_, .partition = on}));
  }
  // Only once all are made: a failure leaves no sub-pool, and the next call tries again.
  auto table = std::make_unique<sub_pools>();
  if (latest != nullptr) table->by_green_context = latest->by_green_context;
  const auto& added = table->by_green_context.emplace_back(green, std::move(made)).second;
  table->replaced.reset(latest);
  sub_pools_.store(table.release(), std::memory_order_release);
  return added[next % added.size()];
}

void stream_pool::check_device_of(stream_view caller) const {
  if (const int device = partition_of(caller).device; device != device_) {
    throw std::invalid_argument("streamlike: stream_pool::get_for: a stream of device " + std::to_string(device) +
                                "; expected one of the pool's device " + std::to_string(device_));
  }
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
