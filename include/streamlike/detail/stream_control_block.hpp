// streamlike/detail/stream_control_block.hpp: the refcounted block behind shared_stream.
//
// One block per owned stream. The count is atomic; a copy is one relaxed increment, a drop one
// acquire-release decrement. What the last drop does depends on how the stream came in (created, adopted, a
// moved-in owner, a keep-alive object, an immortal default stream), so it is a virtual
// dispose(). Its out-of-line parts live in src/shared_stream.cpp.
#ifndef STREAMLIKE_DETAIL_STREAM_CONTROL_BLOCK_HPP
#define STREAMLIKE_DETAIL_STREAM_CONTROL_BLOCK_HPP

#include <streamlike/detail/export.hpp>

#include <cuda_runtime_api.h>

#include <atomic>
#include <optional>
#include <type_traits>
#include <utility>

// The driver's green context handle (cuda.h's CUgreenCtx), declared so that this header does not
// need cuda.h.
struct CUgreenCtx_st;

namespace streamlike::detail {

/// What a shared_stream caches about its stream, so that its queries make no CUDA call. The
/// vocabulary: a block's facts are queried (detail::query_facts, in the library) when it is made,
/// or, for a block made with defer_facts, by the first facts() call; facts_if_known() reads them
/// without a CUDA call. Default streams have none (std::nullopt): they answer for whichever
/// device is current when asked.
struct stream_facts {
  int device = -1;
  unsigned long long id = 0;
  unsigned int flags = 0;
  int priority = 0;
  /// The driver's unique id of the stream's context (cuCtxGetId) if it is its device's primary
  /// context, else 0: tells a stream that died with cudaDeviceReset from a live one when the
  /// last reference drops.
  unsigned long long primary_context_id = 0;
  /// The stream's partition, where known without asking the driver (partition_known): the green
  /// context it was made in (nullptr: a regular context, every SM of the device) and that green
  /// context's SM count. Carried by the owned-stream C ABI (HAS_PARTITION).
  bool partition_known = false;
  CUgreenCtx_st* green_context = nullptr;
  unsigned int sm_count = 0;
};

/// Asks a block to query its facts on first use rather than when made.
struct defer_facts_t {
  explicit defer_facts_t() = default;
};
inline constexpr defer_facts_t defer_facts{};

class STREAMLIKE_API stream_control_block {
public:
  /// Facts known when made (std::nullopt for a default stream).
  stream_control_block(cudaStream_t handle, const std::optional<stream_facts>& facts) noexcept
      : handle_(handle), facts_(facts), facts_known_(facts.has_value()) {}
  /// For keep-alive blocks: importing a foreign stream (a Python exporter, a shared_ptr) must cost
  /// no CUDA call, so the facts are queried by the first query that needs them.
  stream_control_block(cudaStream_t handle, defer_facts_t) noexcept : handle_(handle), deferred_(true) {}
  stream_control_block(const stream_control_block&) = delete;
  stream_control_block& operator=(const stream_control_block&) = delete;

  void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    // One acquire-release decrement and nothing else: every owner's writes happen before
    // dispose(), and a drop that is not the last pays one atomic operation (no load of the
    // count before it, which costs a second trip for the count's cache line when another thread
    // copies the same stream). Not a release decrement plus an acquire fence on the last
    // reference: on x86 that is the same instruction, and ThreadSanitizer does not model fences.
    // bench/RESULTS.md ("shared_stream copy") has the numbers that chose this over a load-first
    // fast path for the last reference.
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) dispose();
  }
  [[nodiscard]] long use_count() const noexcept { return refs_.load(std::memory_order_relaxed); }
  [[nodiscard]] cudaStream_t handle() const noexcept { return handle_; }
  /// The facts, queried now if this block was made with defer_facts (thread-safe; a failed
  /// query throws streamlike::error naming shared_stream::`operation`, the query that asked, and
  /// is retried by the next call).
  [[nodiscard]] const std::optional<stream_facts>& facts(const char* operation) const {
    if (deferred_) query_deferred_facts(operation);
    return facts_;
  }
  /// The facts if known already (made with them, or a deferred query has completed), else
  /// null; no CUDA call, safe from any thread while another queries them. The owners' inline
  /// queries read this, so a cached fact costs no library call.
  [[nodiscard]] const stream_facts* known_facts() const noexcept {
    return facts_known_.load(std::memory_order_acquire) ? &*facts_ : nullptr;
  }
  /// known_facts() as an optional (std::nullopt while unknown), for dispose() and exports.
  [[nodiscard]] std::optional<stream_facts> facts_if_known() const noexcept {
    const stream_facts* known = known_facts();
    return known != nullptr ? std::optional<stream_facts>(*known) : std::nullopt;
  }

protected:
  ~stream_control_block() = default;

private:
  /// Releases the stream (or whatever keeps it alive) and frees the block. Never throws.
  virtual void dispose() noexcept = 0;
  void query_deferred_facts(const char* operation) const; // src/shared_stream.cpp

  std::atomic<long> refs_{1};
  cudaStream_t handle_;
  bool deferred_ = false;
  mutable std::optional<stream_facts> facts_;
  // Set (release) once facts_ holds the facts: at construction, or by the deferred query (which
  // writes facts_ under a lock of src/shared_stream.cpp and may be retried after it threw).
  mutable std::atomic<bool> facts_known_{false};
};

/// A block that holds an object until the last reference drops: a moved-in stream owner, a
/// std::shared_ptr, a Python reference. Destroying the object is what releases the stream.
template <class Held>
class holding_block final : public stream_control_block {
  static_assert(std::is_nothrow_destructible_v<Held>,
                "streamlike: an object that keeps a stream alive is destroyed when the last shared_stream "
                "drops, inside a noexcept destructor; its destructor must not throw.");

public:
  template <class Facts, class U>
  holding_block(cudaStream_t handle, Facts facts, U&& held)
      : stream_control_block(handle, facts), held_(std::forward<U>(held)) {}

  [[nodiscard]] Held& held() noexcept { return held_; }

private:
  void dispose() noexcept override { delete this; }
  Held held_;
};

} // namespace streamlike::detail

#endif // STREAMLIKE_DETAIL_STREAM_CONTROL_BLOCK_HPP
