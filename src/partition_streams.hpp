// What the owners and the pool need of partitions (src/partition.cpp): streams made in a green
// context, the partition that keeps a unique_stream's green context alive, a stream's context id,
// and the partition of a green context met on someone's stream.
#ifndef STREAMLIKE_SRC_PARTITION_STREAMS_HPP
#define STREAMLIKE_SRC_PARTITION_STREAMS_HPP

#include <streamlike/detail/stream_control_block.hpp>
#include <streamlike/partition.hpp>
#include <streamlike/stream_options.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace streamlike::detail {

/// A stream made in `options.partition`'s green context (cuGreenCtxStreamCreate), and its facts
/// (device, flags, priority, partition; no primary context; the id only once asked). Throws
/// std::invalid_argument naming `who` for options a green stream cannot have (another device,
/// blocking, a priority outside the device's range), streamlike::error when the driver refuses.
struct green_stream {
  cudaStream_t handle = nullptr;
  stream_facts facts;
};
[[nodiscard]] green_stream create_green_stream(const stream_options& options, const char* who);

/// Fills `made.facts.id` (cuStreamGetId), for an owner that keeps the facts; a unique_stream keeps
/// none and does not ask. Where the driver fails, destroys the stream and throws streamlike::error
/// naming `who`.
void ask_green_stream_id(green_stream& made, const char* who);

/// Destroys a stream made by create_green_stream (cuStreamDestroy, which needs no current
/// context; else the runtime's destroy on its device). Never throws.
void destroy_green_stream(cudaStream_t handle, int device) noexcept;

/// Holds `p`, and the stream's `device`, until destroy_if_kept_partition(handle): what keeps a
/// unique_stream's green context alive (a unique_stream is one handle, with no room for it).
void keep_partition_of(cudaStream_t handle, int device, partition&& p);
/// Destroys `handle` if keep_partition_of holds a partition for it: the driver's destroy, which
/// needs no current context, then the partition let go (it may destroy the green context). Says
/// whether it did. One relaxed load when no unique_stream of a partition lives. Never throws.
[[nodiscard]] bool destroy_if_kept_partition(cudaStream_t handle) noexcept;

/// The green context `stream` was made in (cuStreamGetGreenCtx), null for a plain stream or where
/// the driver has no green contexts. Throws streamlike::error naming `who` if the driver fails.
[[nodiscard]] CUgreenCtx_st* green_context_of(stream_view stream, const char* who);

/// The driver's id of the context `stream` runs in (cuStreamGetCtx, then cuCtxGetId): for a green
/// stream its green context's (its partition's id()), for a plain one its regular context's. Ids are
/// never reused, unlike handles. Both calls are capture-safe. Throws streamlike::error naming `who`
/// if the driver fails.
[[nodiscard]] unsigned long long context_id_of(stream_view stream, const char* who);

/// The context `stream` runs in (cuStreamGetCtx), as context_id_of asks it, and that context's id
/// (cuCtxGetId). Throw streamlike::error naming `who` if the driver fails.
[[nodiscard]] CUctx_st* context_of(stream_view stream, const char* who);
[[nodiscard]] unsigned long long id_of_context(CUctx_st* context, const char* who);

/// Whether `green_context` is still the green context whose context has id `context_id`: false once
/// it is destroyed, and once its handle names another green context made since. Never throws.
[[nodiscard]] bool green_context_alive(CUgreenCtx_st* green_context, unsigned long long context_id) noexcept;

/// The partition of a green context whose context has id `context_id`: the live streamlike
/// partition of that id if there is one (shared, so it stays alive), else a borrowed one.
[[nodiscard]] partition partition_of_green_context(CUgreenCtx_st* green_context, unsigned long long context_id);

} // namespace streamlike::detail

#endif // STREAMLIKE_SRC_PARTITION_STREAMS_HPP
