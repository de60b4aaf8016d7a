// A second copy of streamlike, held inside a library loaded RTLD_LOCAL with its symbols hidden, as
// an extension module holds one: bench/current_stream.cpp loads it after its own copy
// (libstreamlike.so) published the process's registry, so this copy's current_stream() forwards
// to that registry ("One registry per process", docs/current-stream.md). Its rows time what a
// module's call costs.
#include <streamlike/c/current_stream_registry.h>
#include <streamlike/current_stream.hpp>

#define BENCH_COPY_API extern "C" __attribute__((visibility("default")))

/// This copy's streamlike::current_stream(device), as a handle.
BENCH_COPY_API void* bench_copy_current_stream(int device) { return streamlike::current_stream(device).get(); }

/// The registry this copy uses: the published one where it forwards.
BENCH_COPY_API const void* bench_copy_registry() { return streamlike_current_stream_registry_table(); }
