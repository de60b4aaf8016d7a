// shared_stream and its control blocks (include/streamlike/shared_stream.hpp,
// include/streamlike/detail/stream_control_block.hpp).
#include "capture_checks.hpp"
#include "cuda_context.hpp"
#include "error_messages.hpp"
#include "partition_streams.hpp"
#include "stream_lifecycle.hpp"

#include <streamlike/detail/shared_stream_access.hpp>
#include <streamlike/detail/stream_control_block.hpp>
#include <streamlike/detail/stream_operations.hpp>
#include <streamlike/error.hpp>
#include <streamlike/shared_stream.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <optional>
#include <utility>

namespace streamlike {
namespace detail {

namespace {

// The deferred queries of all blocks share a few locks, picked by the block's address: a block
// keeps no lock of its own (its size is the ABI's), and a query is rare (once per block). Not
// std::call_once: a throwing query (a capturing stream) must leave the next call free to retry,
// and a pthread_once-based call_once left by an exception hangs the next call where the once is
// intercepted (ThreadSanitizer) or unwinding through pthread_once is not supported (GCC bug 66146).
std::mutex& deferred_facts_lock(const void* block) noexcept {
  static std::mutex locks[16];
  return locks[(reinterpret_cast<std::uintptr_t>(block) / 64) % 16];
}

} // namespace

void stream_control_block::query_deferred_facts(const char* operation) const {
  // On a capturing stream query_facts throws capture::capturing_error and nothing is cached:
  // shared_stream's queries then answer without the cache (below), and the next call asks again.
  if (facts_known_.load(std::memory_order_acquire)) return;
  const std::lock_guard lock(deferred_facts_lock(this));
  if (facts_known_.load(std::memory_order_relaxed)) return;
  facts_ = query_facts(handle_, "shared_stream", operation);
  facts_known_.store(true, std::memory_order_release);
}

namespace {

// The memory of one freed block of a class, which the next create of that class (on any thread)
// reuses: a create + drop then calls neither malloc nor free (a part of its cost measured in place:
// bench/RESULTS.md, "Stream creation"). One atomic exchange takes it, one
// compare-and-swap gives it back; a block that finds the slot full goes back to the heap. The
// block kept at exit stays reachable from here. Block is final: every block of it is one size.
template <class Block>
class keeps_one_spare {
public:
  static void* operator new(std::size_t size) {
    if (spare.load(std::memory_order_relaxed) != nullptr) {
      if (void* block = spare.exchange(nullptr, std::memory_order_acquire)) return block;
    }
    return ::operator new(size);
  }
  static void operator delete(void* block) noexcept {
    void* empty = nullptr;
    if (!spare.compare_exchange_strong(empty, block, std::memory_order_release, std::memory_order_relaxed)) {
      ::operator delete(block);
    }
  }

private:
  static inline std::atomic<void*> spare{nullptr};
};

// The block of a stream streamlike created or adopted: dispose destroys the stream, on its own
// device, unless it died with its context (cudaDeviceReset).
class destroying_block final : public stream_control_block, public keeps_one_spare<destroying_block> {
public:
  /// A stream created in its device's primary context, whose handle the drop asks.
  destroying_block(cudaStream_t handle, const stream_facts& facts, CUcontext primary_context) noexcept
      : stream_control_block(handle, facts), primary_context_(primary_context) {}

private:
  void dispose() noexcept override {
    if (destroy_if_kept_partition(handle())) { // a unique_stream made on a partition, then moved in
      delete this;
      return;
    }
    // Always known: queried when the stream was created or adopted.
    const stream_facts* facts = known_facts();
    // Created here in a primary context (the common case): that context asked for its id, then
    // the driver's destroy. Adopted, and dropped where its primary context is current: the
    // current context's id, then the destroy. Else the primary context is asked for (retain,
    // id, release) and the runtime destroys the stream on its device, unless it died with its
    // context (cudaDeviceReset).
    if (facts) {
      const bool destroyed =
          primary_context_ != nullptr
              ? destroy_if_primary_context_alive(handle(), primary_context_, facts->primary_context_id)
              : destroy_if_context_current(handle(), facts->primary_context_id);
      if (!destroyed && cuda_context::still_alive(facts->primary_context_id, facts->device)) {
        destroy_stream_on_device(handle(), facts->device);
      }
    }
    delete this;
  }

  CUcontext primary_context_ = nullptr;
};

// The block of a default stream: heap-allocated, never freed, and dispose() does nothing, so
// shared_streams of it stay valid whatever the order of static destruction.
class immortal_block final : public stream_control_block {
public:
  explicit immortal_block(cudaStream_t handle) noexcept : stream_control_block(handle, std::nullopt) {}

private:
  void dispose() noexcept override {}
};

} // namespace

namespace {

shared_stream destroying(cudaStream_t handle, const stream_facts& facts, CUcontext primary_context = nullptr) {
  return shared_stream_access::make(new destroying_block(handle, facts, primary_context));
}

// Never destroyed: shared_streams of the default streams may outlive every static.
shared_stream immortal(cudaStream_t handle) noexcept { return shared_stream_access::make(new immortal_block(handle)); }

} // namespace
} // namespace detail

namespace detail {
namespace {

// The block of a stream made on a partition: dispose destroys the stream (the driver's destroy,
// which needs no current context), then the block's copy of the partition goes, which may
// destroy the green context.
class green_block final : public stream_control_block, public keeps_one_spare<green_block> {
public:
  green_block(const green_stream& made, partition&& on) noexcept
      : stream_control_block(made.handle, made.facts), on_(std::move(on)) {}

private:
  void dispose() noexcept override {
    destroy_green_stream(handle(), known_facts()->device); // known: given when made
    delete this;
  }
  partition on_;
};

// The options' partition moves into the stream's block once the stream exists.
[[gnu::noinline]] shared_stream create_on_partition(stream_options& options) {
  green_stream made = create_green_stream(options, "shared_stream::create");
  ask_green_stream_id(made, "shared_stream::create");
  try {
    return shared_stream_access::make(new green_block(made, std::move(*options.partition)));
  } catch (...) { // the stream is ours until its block exists
    destroy_green_stream(made.handle, made.facts.device);
    throw;
  }
}

} // namespace
} // namespace detail

shared_stream shared_stream::create(stream_options options) {
  if (options.partition) [[unlikely]]
    return detail::create_on_partition(options);
  const detail::created_stream created = detail::create_stream(options, "shared_stream::create");
  try {
    return detail::destroying(created.handle, detail::facts_of_created(created), created.primary_context);
  } catch (...) { // the stream is ours until its block exists
    detail::destroy_stream_on_device(created.handle, created.device);
    throw;
  }
}

shared_stream shared_stream::adopt(cudaStream_t handle) {
  if (stream_view{handle}.is_default()) detail::throw_cannot_own_default("shared_stream::adopt");
  // Owned only once its block exists: a failure leaves the handle to the caller.
  return detail::destroying(handle, detail::query_facts(handle, "shared_stream", "adopt"));
}

shared_stream shared_stream::legacy_default() noexcept {
  static const shared_stream stream = detail::immortal(cudaStreamLegacy);
  return stream;
}

shared_stream shared_stream::per_thread_default() noexcept {
  static const shared_stream stream = detail::immortal(cudaStreamPerThread);
  return stream;
}

void shared_stream::throw_empty(const char* what) {
  detail::throw_empty("shared_stream", what, "default-constructed or moved-from", "one that holds a stream");
}

const std::optional<detail::stream_facts>& shared_stream::facts(const char* operation) const {
  if (block_ == nullptr) throw_empty(operation);
  try {
    return block_->facts(operation);
  } catch (const detail::capture::capturing_error&) {
    // A keep-alive stream first asked while it captures: the cache stays unfilled until the
    // capture ends, and the query answers the capture-safe way or refuses by its own name.
    static const std::optional<detail::stream_facts> unknown;
    return unknown;
  }
}

int shared_stream::query_device() const {
  const auto& known = facts("device");
  return known ? known->device : detail::stream_operations::device(handle_, "shared_stream");
}

unsigned long long shared_stream::query_id() const {
  const auto& known = facts("id");
  return known ? known->id : detail::stream_operations::id(handle_, "shared_stream");
}

unsigned int shared_stream::query_flags() const {
  const auto& known = facts("flags");
  return known ? known->flags : detail::stream_operations::flags(handle_, "shared_stream");
}

int shared_stream::query_priority() const {
  const auto& known = facts("priority");
  return known ? known->priority : detail::stream_operations::priority(handle_, "shared_stream");
}

} // namespace streamlike
