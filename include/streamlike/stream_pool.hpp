// streamlike/stream_pool.hpp: a fixed set of streams on one device, handed out round-robin.
//
// As RMM's cuda_stream_pool (16 streams by default), but handing out shared_streams, so a
// stream taken from the pool stays valid even if the pool dies first. Thread-safe: get() is
// one atomic increment and one shared_stream copy.
#ifndef STREAMLIKE_STREAM_POOL_HPP
#define STREAMLIKE_STREAM_POOL_HPP

#include <streamlike/detail/export.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_options.hpp>
#include <streamlike/stream_view.hpp>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

// The driver's context handle (cuda.h's CUcontext is `CUctx_st*`), declared here so that this
// header does not need cuda.h.
struct CUctx_st;

namespace streamlike {

/// A fixed set of shared_streams on one device, handed out round-robin (see the file comment).
class STREAMLIKE_API stream_pool {
public:
  static constexpr std::size_t default_size = 16;

  /// Creates `size` streams with `options` (all on options.device, or the current device).
  /// size 0 is refused with std::invalid_argument; CUDA failures throw streamlike::error.
  explicit stream_pool(std::size_t size = default_size, const stream_options& options = {});
  explicit stream_pool(const stream_options& options) : stream_pool(default_size, options) {}

  stream_pool(const stream_pool&) = delete;
  stream_pool& operator=(const stream_pool&) = delete;
  ~stream_pool();

  /// The next stream, round-robin.
  [[nodiscard]] shared_stream get() noexcept {
    return streams_[next_.fetch_add(1, std::memory_order_relaxed) % streams_.size()];
  }
  /// The next stream, round-robin, that is not in a CUDA graph capture (as c10's
  /// getNonCapturingStreamFromPool): a pool stream that a capture is using is skipped, so work
  /// queued on the result runs now instead of joining someone's graph. One cudaStreamIsCapturing
  /// per stream looked at; throws streamlike::error naming stream_pool::get_non_capturing when
  /// every stream of the pool is capturing.
  [[nodiscard]] shared_stream get_non_capturing();
  /// A pooled stream in the same partition as `caller` (docs/partitions.md): for a stream of a
  /// green context, the next stream, round-robin, of a sub-pool of size() streams made in that
  /// green context the first time it is met (shared with the streamlike partition that made it,
  /// else borrowed: its owner must keep it alive while this pool lives); for a plain stream,
  /// get(). So a library that forks work from its caller's stream stays inside the caller's SMs.
  /// The sub-pool's streams have the pool's priority. One capture-safe driver query, cuStreamGetCtx:
  /// the pool's own context and an owned partition's sub-pool are found by the caller's context
  /// handle (their streams keep them alive), a borrowed one's by the context's id, a second query
  /// (cuCtxGetId: a handle can name another green context once its owner destroyed the first);
  /// then, for the pool's own context, get(), else a look-up without a lock (the lock is taken only
  /// to make a sub-pool). A borrowed sub-pool whose green context is gone is dropped when the pool
  /// next makes one.
  /// Throws std::invalid_argument for a stream of another device than the pool's, green or not
  /// (naming both devices), streamlike::error when the driver fails.
  [[nodiscard]] shared_stream get_for(stream_view caller);
  /// The stream at `index % size()`, for callers that want a stable choice.
  [[nodiscard]] const shared_stream& at(std::size_t index) const noexcept { return streams_[index % streams_.size()]; }

  [[nodiscard]] std::size_t size() const noexcept { return streams_.size(); }
  [[nodiscard]] int device() const noexcept { return device_; }

private:
  [[nodiscard]] shared_stream get_for_new_context(stream_view caller, CUctx_st* context, unsigned long long id,
                                                  std::size_t next);
  // Throws std::invalid_argument unless `caller` (of partition `green`, or plain where null) is of the pool's device.
  void check_device_of(stream_view caller, const partition* green) const;

  std::vector<shared_stream> streams_;
  int device_ = -1;
  int priority_ = 0;
  std::atomic<std::size_t> next_{0};
  // get_for: the context of the pool's streams (asked on first use), and the sub-pools by context,
  // made on first use.
  std::atomic<CUctx_st*> context_{nullptr};
  // The sub-pools, an immutable table read with one acquire load; making a sub-pool publishes a
  // new table under the lock, and the ones it replaced stay (a reader may be scanning one) until
  // the pool dies (src/stream_pool.cpp).
  struct sub_pools;
  std::atomic<const sub_pools*> sub_pools_{nullptr};
  std::mutex sub_pools_lock_;
};

} // namespace streamlike

#endif // STREAMLIKE_STREAM_POOL_HPP
