/* A CUDA runtime and driver made of bookkeeping, for checks that must run without a GPU: what
 * streamlike asks of CUDA, and whether any of it would have invalidated a graph capture.
 *
 * fake_cuda.cpp defines, as extern "C" functions, every CUDA runtime call that libstreamlike
 * makes (test/gpu/fake_driver/covers.py checks that against libstreamlike.so's imports) and the
 * driver calls it fetches through cudaGetDriverEntryPointByVersion. Two ways to put it in front
 * of the real cudart:
 *   - linked into a test program exported to the dynamic symbol table (-Wl,--export-dynamic):
 *     libstreamlike's calls then bind to the program's definitions (test/host/capture_safety.cpp);
 *   - as libstreamlike_fake_cuda.so, preloaded: LD_PRELOAD=.../libstreamlike_fake_cuda.so
 *     python -m pytest ...; a Python test drives it through ctypes.CDLL of the same path.
 *
 * What it models (docs/cuda-graphs.md, "What CUDA does"): streams with an id, flags, priority,
 * device and a capture status (none, active, invalidated) and mode; events (where they were
 * recorded: outside any capture, or in capture N); graphs with their user objects; one context
 * per device. A call that CUDA lets invalidate a capture does so here too: the stream's capture
 * becomes invalidated and the call is recorded as an invalidation. Those calls are:
 *   on a capturing stream (active or already invalidated): cudaStreamGetId/GetFlags/GetDevice
 *   (and cuStreamGetId/GetFlags/GetDevice), cudaStreamQuery/Synchronize (and cuStreamQuery/
 *   Synchronize), cudaStreamBeginCapture, cudaGraphLaunch, cudaGraphUpload, and
 *   cudaStreamWaitEvent/cuStreamWaitEvent on an event not recorded in the same capture;
 *   while any stream captures in global mode (or in thread-local mode, from the capturing thread):
 *   cudaEventQuery, cudaEventSynchronize (and cuEventQuery/cuEventSynchronize),
 *   cudaDeviceSynchronize, and a query or synchronize of a stream that does not capture.
 * Every call, invalidating or not, is also counted by name (fake_cuda_calls).
 *
 * Switches by environment variable, read at the first call (for preloaded use):
 *   STREAMLIKE_FAKE_CUDA_DEVICES=N      the device count (default 1; 0: cudaErrorNoDevice)
 *   STREAMLIKE_FAKE_CUDA_CAPTURE=active|invalidated
 *                                       every stream created afterwards starts in that capture
 *                                       (global mode), as if a framework had begun one
 *   STREAMLIKE_FAKE_CUDA_EVENTS=not_ready
 *                                       cudaEventQuery/cuEventQuery answer cudaErrorNotReady
 *                                       (default: ready)
 *   STREAMLIKE_FAKE_CUDA_LOG=PATH       appends one line per call to PATH: "NAME" for a call,
 *                                       "INVALIDATED NAME" for a call that invalidated a capture
 */
#ifndef STREAMLIKE_TEST_FAKE_CUDA_H
#define STREAMLIKE_TEST_FAKE_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fake_cuda_capture_status { fake_cuda_none = 0, fake_cuda_active = 1, fake_cuda_invalidated = 2 };

/* 1: this process's CUDA calls reach the fake (a check a test makes first). */
int fake_cuda_present(void);

/* Forgets the counts and the invalidations (streams, events and graphs stay). */
void fake_cuda_reset_log(void);

/* Puts `stream` (a handle the fake made, or 0x1/0x2) in a capture: status fake_cuda_active or
 * fake_cuda_invalidated with mode 0 global, 1 thread-local, 2 relaxed (cudaStreamCaptureMode),
 * or out of it (fake_cuda_none). Returns 0, or -1 for a handle the fake does not know. */
int fake_cuda_set_capture(void* stream, int status, int mode);

/* The capture status of `stream` (enum fake_cuda_capture_status), -1 for an unknown handle. */
int fake_cuda_capture_status(void* stream);

/* How many times the call named `name` ("cudaStreamGetId", "cuStreamIsCapturing") was made since
 * the last reset. */
long fake_cuda_calls(const char* name);

/* The distinct names of the calls made since the last reset, in name order: the i-th, nullptr
 * past the end (with fake_cuda_calls, every call a piece of code makes, and nothing else). */
const char* fake_cuda_called(size_t i);

/* The device count from now on, as STREAMLIKE_FAKE_CUDA_DEVICES sets it at the start (for a
 * program that links the fake). */
void fake_cuda_set_devices(int n);

/* The calls that invalidated a capture since the last reset: how many, and the name of the i-th
 * (nullptr past the end). */
size_t fake_cuda_invalidations(void);
const char* fake_cuda_invalidation(size_t i);

/* How many streams and events the fake made and were not destroyed yet. */
long fake_cuda_live_streams(void);
long fake_cuda_live_events(void);

/* What cudaEventQuery/cuEventQuery answer for `event`: 1 ready, 0 not ready. */
int fake_cuda_set_event_ready(void* event, int ready);

#ifdef __cplusplus
}
#endif

#endif /* STREAMLIKE_TEST_FAKE_CUDA_H */
