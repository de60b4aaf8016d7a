// What the owners and the pool need of partitions (src/partition.cpp): streams made in a green
// context, the partition that keeps a unique_stream's green context alive, and the partition of
// a green context met on someone's stream.
#ifndef STREAMLIKE_SRC_PARTITION_STREAMS_HPP
#define STREAMLIKE_SRC_PARTITION_STREAMS_HPP

#include <streamlike/detail/stream_control_block.hpp>
#include <streamlike/partition.hpp>
#include <streamlike/stream_options.hpp>

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

/// The context `stream` lives in (cuStreamGetCtx), as an opaque pointer. Throws streamlike::error
/// naming `who` if the driver fails.
[[nodiscard]] void* context_of(stream_view stream, const char* who);

/// Where `stream` runs, as stream_pool::get_for needs it: its green context (null for a plain
/// stream) and, for a plain stream, its context. One driver call where the driver has
/// cuStreamGetCtx_v2, else cuStreamGetGreenCtx and, for a plain stream, cuStreamGetCtx. Throws
/// streamlike::error naming `who` if the driver fails.
struct stream_contexts {
  CUgreenCtx_st* green_context = nullptr;
  void* context = nullptr; // a plain stream's (for a green one, unspecified)
};
[[nodiscard]] stream_contexts contexts_of(stream_view stream, const char* who);

/// The partition of a green context: the live streamlike partition made of it if there is one
/// (shared, so it stays alive), else a borrowed one.
[[nodiscard]] partition partition_of_green_context(CUgreenCtx_st* green_context);

} // namespace streamlike::detail

#endif // STREAMLIKE_SRC_PARTITION_STREAMS_HPP
