// Counts the CUDA runtime calls that create and destroy streams and events, by interposing them
// in the test program (call_counters.cpp). Link call_counters.cpp into an executable built with
// `export_dynamic: true`: its extern "C" definitions of cudaStreamCreate, cudaStreamCreateWithFlags,
// cudaStreamCreateWithPriority, cudaStreamDestroy, cudaEventCreate, cudaEventCreateWithFlags,
// cudaEventDestroy, cudaEventRecord and cudaStreamWaitEvent then come first in the process's
// symbol lookup, so libstreamlike's calls (through its PLT, into the shared cudart) land here too;
// each counts and forwards to the real function found with dlsym(RTLD_NEXT, ...). The driver's
// cuEventRecord, cuStreamWaitEvent, cuStreamCreateWithPriority and cuStreamDestroy, which
// libstreamlike fetches with cudaGetDriverEntryPointByVersion (also interposed), are counted as the
// runtime's are (a stream the driver made or destroyed counts as a create or a destroy).
//
// Besides the counts it keeps the set of live stream handles (created, not yet destroyed), so a
// test can tell a double destroy or a leak from a balanced count. Handles are reused by the
// driver, so "live" means "between a create that returned it and the destroy that ended it".
//
// Only legacy-mode calls are interposed (libstreamlike is compiled without per-thread default
// streams; the _ptsz variants of cudaEventRecord and cudaStreamWaitEvent are not counted).
#ifndef STREAMLIKE_TEST_GPU_CALL_COUNTERS_HPP
#define STREAMLIKE_TEST_GPU_CALL_COUNTERS_HPP

#include <cuda_runtime_api.h>

#include <cstddef>
#include <ostream>
#include <set>

namespace call_counters {

struct counts {
  long long stream_creates = 0;         // successful cudaStreamCreate* calls, all three
  long long stream_destroys = 0;        // cudaStreamDestroy calls on a live handle
  long long stream_destroys_failed = 0; // ... of those, how many returned an error
  long long destroys_not_live = 0;      // cudaStreamDestroy of a handle not live: a double destroy (or foreign)
  long long creates_while_live = 0;     // a create returned a handle still live: a destroy went unseen
  long long event_creates = 0;          // successful cudaEventCreate / cudaEventCreateWithFlags
  long long event_destroys = 0;         // cudaEventDestroy calls
  long long event_records = 0;          // cudaEventRecord and cuEventRecord calls
  long long stream_wait_events = 0;     // cudaStreamWaitEvent and cuStreamWaitEvent calls
  std::size_t live_streams = 0;         // handles created and not yet destroyed
};

/// The counts so far (all threads).
[[nodiscard]] counts now();

/// The difference b - a, field by field (live_streams: b's).
[[nodiscard]] counts since(const counts& a, const counts& b);

/// True once any call went through the interposer: false means the interposition is not in
/// effect (the program was not linked with export_dynamic, or cudart is linked statically), and
/// every count below would be vacuous.
[[nodiscard]] bool active();

/// True if `handle` was created and not yet destroyed.
[[nodiscard]] bool is_live(cudaStream_t handle);

/// The live stream handles.
[[nodiscard]] std::set<cudaStream_t> live_streams();

/// How many times cudaStreamDestroy was called with `handle` since the tracker started (any
/// state, live or not).
[[nodiscard]] long long destroy_calls_for(cudaStream_t handle);

/// Drops `handle` from the live set without a destroy: for streams that died with their context
/// (cudaDeviceReset), which nobody may destroy.
void forget(cudaStream_t handle);

std::ostream& operator<<(std::ostream& os, const counts& c);

} // namespace call_counters

#endif // STREAMLIKE_TEST_GPU_CALL_COUNTERS_HPP
