// The program every consumer project builds (test/consumers/<build system>/): code that accepts a
// stream through stream_like, as a library built on streamlike would, using both the headers and the
// compiled library. It needs no GPU: it only prints handles and makes no CUDA call.
#include <streamlike/streamlike.hpp>

#include <cstdio>
#include <utility>

#ifndef STREAMLIKE_CONSUMER
#  define STREAMLIKE_CONSUMER "unknown build system"
#endif

namespace {

// A library function that takes any stream: the edge where streamlike converts, once.
template <streamlike::stream_like S>
streamlike::stream_view enqueue_nothing(S&& stream) {
  const streamlike::stream_view view = streamlike::get_stream(std::forward<S>(stream));
  std::printf("streamlike consumer (%s): stream handle %p\n", STREAMLIKE_CONSUMER, static_cast<void*>(view.get()));
  return view;
}

} // namespace

int main() {
  // Header only: the legacy default stream, named explicitly.
  const auto legacy = enqueue_nothing(streamlike::stream_view::legacy_default());
  // The compiled library: the immortal shared default stream lives in libstreamlike.
  const streamlike::shared_stream shared = streamlike::shared_stream::per_thread_default();
  const auto per_thread = enqueue_nothing(shared);
  const bool ok = legacy.get() == cudaStreamLegacy && per_thread.get() == cudaStreamPerThread;
  std::printf("streamlike consumer (%s): %s\n", STREAMLIKE_CONSUMER, ok ? "ok" : "WRONG HANDLES");
  return ok ? 0 : 1;
}
