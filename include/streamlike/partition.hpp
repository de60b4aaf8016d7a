// streamlike/partition.hpp: an SM partition of a device (a CUDA green context) as a refcounted
// owner, and the partition any stream runs in.
//
// A green context owns a subset of a device's SMs; the streams made in it run only there. A
// library handed such a stream keeps its own side streams inside the caller's SMs by asking the
// stream's partition (partition_of) and making, or taking from a pool (stream_pool::get_for),
// streams in the same green context. docs/partitions.md has the vocabulary and the decisions.
#ifndef STREAMLIKE_PARTITION_HPP
#define STREAMLIKE_PARTITION_HPP

#include <streamlike/detail/export.hpp>
#include <streamlike/stream_view.hpp>

#include <memory>
#include <utility>

// The driver's green context handle (cuda.h's CUgreenCtx is `CUgreenCtx_st*`), declared here so
// that this header does not need cuda.h.
struct CUgreenCtx_st;

namespace streamlike {

namespace detail {
struct partition_state;  // src/partition.cpp
struct partition_access; // src/partition.cpp
} // namespace detail

/// A refcounted green context: copies share it, the last one destroys it if it is owned
/// (create, adopt), never if it is borrowed (borrow). Streams made on a partition
/// (stream_options::partition) hold a copy, so the green context outlives them. Thread-safe as
/// std::shared_ptr: copies and drops from any thread.
class STREAMLIKE_API partition {
public:
  /// An empty partition (no green context); queries throw std::logic_error.
  partition() noexcept = default;

  /// A green context of `sm_count` SMs of `device`: the device's SMs split into groups of
  /// sm_count (cuDevSmResourceSplitByCount; the driver may round the count up to its granularity,
  /// which sm_count() reports), and a green context made of the first group. Throws
  /// std::invalid_argument for a device this process does not have, sm_count 0, or one above the
  /// device's SM count; streamlike::error naming the driver call when the driver refuses, or when
  /// it has no green contexts (no driver, or one without them).
  [[nodiscard]] static partition create(int device, unsigned int sm_count);

  /// Takes ownership of a green context made elsewhere (cuGreenCtxCreate): cuGreenCtxDestroy
  /// when the last copy drops. Throws std::invalid_argument for a null handle, streamlike::error
  /// if the driver cannot describe it.
  [[nodiscard]] static partition adopt(CUgreenCtx_st* green_context);

  /// Shares a green context that someone else owns (torch's GreenContext, cuda.core's) without
  /// destroying it: the owner must keep it alive while this partition and the streams made on it
  /// live. Throws as adopt.
  [[nodiscard]] static partition borrow(CUgreenCtx_st* green_context);

  /// False when empty.
  [[nodiscard]] explicit operator bool() const noexcept { return state_ != nullptr; }

  /// The device, the SM count the green context holds (cuGreenCtxGetDevResource), the driver's
  /// unique id of its context (cuCtxGetId of cuCtxFromGreenCtx: what partition_of reports for
  /// the streams made in it), the green context's handle, and whether the last copy destroys it.
  [[nodiscard]] int device() const;
  [[nodiscard]] unsigned int sm_count() const;
  [[nodiscard]] unsigned long long id() const;
  [[nodiscard]] CUgreenCtx_st* green_context() const;
  [[nodiscard]] bool owned() const;

  /// How many partitions and streams share this green context; 0 when empty.
  [[nodiscard]] long use_count() const noexcept { return state_.use_count(); }

  /// The same green context: the same context id (id()), so two partitions that borrowed one green
  /// context compare equal, and one made later at a destroyed one's address does not. Two empty
  /// partitions are equal, an empty one equals no other.
  friend bool operator==(const partition& a, const partition& b) noexcept { return a.id_or_zero() == b.id_or_zero(); }

private:
  friend struct detail::partition_access;
  [[nodiscard]] unsigned long long id_or_zero() const noexcept; // a context id is never 0
  explicit partition(std::shared_ptr<const detail::partition_state> state) noexcept : state_(std::move(state)) {}
  const detail::partition_state& state(const char* operation) const;

  std::shared_ptr<const detail::partition_state> state_;
};

/// The partition a stream runs in, as partition_of reports it.
struct partition_info {
  /// True for a stream made in a green context (cuStreamGetGreenCtx answers one).
  bool green = false;
  /// The device of the stream's context.
  int device = -1;
  /// The driver's unique id of the stream's context (cuCtxGetId): a green context's for a green
  /// stream, the primary context's (or another regular context's) for a plain one.
  unsigned long long context_id = 0;
  /// The SMs the stream's work may run on: the green context's, or every SM of the device.
  unsigned int sm_count = 0;
  /// The green context (null for a plain stream): pass it to partition::borrow to make more
  /// streams there.
  CUgreenCtx_st* green_context = nullptr;

  friend bool operator==(const partition_info&, const partition_info&) = default;
};

/// The partition of any stream: one made here, torch's green-context streams, cuda.core's,
/// CCCL's, a raw handle. For a default stream, the calling thread's current context's (as the
/// driver answers). Asks only calls that name a context or a green context, never the stream's
/// id, flags or device, so that it does not invalidate a capture the stream is in (measured on the
/// H200 in all three capture modes, docs/partitions.md): cuStreamGetCtx, cuStreamGetGreenCtx,
/// cuCtxGetId, cuCtxGetDevice, cuGreenCtxGetDevResource/cuCtxGetDevResource (they name no stream).
/// Throws streamlike::error naming partition_of and the driver call that failed.
[[nodiscard]] STREAMLIKE_API partition_info partition_of(stream_view stream);

} // namespace streamlike

#endif // STREAMLIKE_PARTITION_HPP
