// streamlike/detail/shared_stream_access.hpp: access to a shared_stream's control block, for the
// library (src/) and the Python bridge's own block (python/detail/reference_block.hpp); shared_stream
// names it a friend. Not for users: make a shared_stream with its named functions.
#ifndef STREAMLIKE_DETAIL_SHARED_STREAM_ACCESS_HPP
#define STREAMLIKE_DETAIL_SHARED_STREAM_ACCESS_HPP

#include <streamlike/detail/stream_control_block.hpp>
#include <streamlike/shared_stream.hpp>

namespace streamlike::detail {

struct shared_stream_access {
  /// Adopts the block's initial reference.
  static shared_stream make(stream_control_block* block) noexcept { return shared_stream(block); }
  /// The block of a non-empty shared_stream.
  static const stream_control_block& block(const shared_stream& stream) noexcept { return *stream.block_; }
};

} // namespace streamlike::detail

#endif // STREAMLIKE_DETAIL_SHARED_STREAM_ACCESS_HPP
