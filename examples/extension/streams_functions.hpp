// The C++ side of the extension example (docs/python-extensions.md): plain functions on
// streamlike's vocabulary types, bound once with nanobind (streams_nb.cpp) and once with pybind11
// (streams_pb.cpp). Nothing here knows Python: the casters turn any object with __cuda_stream__
// into a stream_view or a shared_stream, and a shared_stream returned into a streamlike.Stream.
#ifndef STREAMLIKE_EXAMPLE_STREAMS_FUNCTIONS_HPP
#define STREAMLIKE_EXAMPLE_STREAMS_FUNCTIONS_HPP

#include <streamlike/streamlike.hpp>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace example {

/// The handle of any stream object: borrowed, valid during the call.
inline std::uintptr_t handle(streamlike::stream_view stream) noexcept {
  return reinterpret_cast<std::uintptr_t>(stream.get());
}

/// Streams kept for later work: a shared_stream keeps its exporter (the Python object) alive.
inline std::mutex kept_mutex;
inline std::vector<streamlike::shared_stream> kept_streams;

inline void keep(streamlike::shared_stream stream) {
  const std::lock_guard lock(kept_mutex);
  kept_streams.push_back(std::move(stream));
}
inline std::size_t kept() {
  const std::lock_guard lock(kept_mutex);
  return kept_streams.size();
}
inline void release() {
  std::vector<streamlike::shared_stream> dropped;
  {
    const std::lock_guard lock(kept_mutex);
    dropped.swap(kept_streams);
  } // the last references drop here, outside the lock (a Python exporter is released under the GIL)
}

/// How many references share the stream's owner, this parameter's included (shared_stream::use_count).
inline long use_count(const streamlike::shared_stream& stream) noexcept { return stream.use_count(); }

/// A C++ stream handed to Python: the immortal legacy default stream (no GPU needed) ...
inline streamlike::shared_stream legacy_default() noexcept { return streamlike::shared_stream::legacy_default(); }
/// ... and a new stream (needs a CUDA device; without one, streamlike::error -> RuntimeError).
inline streamlike::shared_stream create() { return streamlike::shared_stream::create(); }

} // namespace example

#endif // STREAMLIKE_EXAMPLE_STREAMS_FUNCTIONS_HPP
