/* A CUDA runtime and driver made of bookkeeping, for checks that must run without a GPU: what
 * streamlike asks of CUDA, and whether any of it would have invalidated a graph capture.
 *
 * Its sources (the model, fake_cuda_model.hpp, and the fake_cuda_*.cpp beside it) define, as
 * extern "C" functions, every CUDA runtime call that libstreamlike makes (test/fake_cuda/covers.py
 * checks that against libstreamlike.so's imports) and the driver calls it fetches through
 * cudaGetDriverEntryPointByVersion. Two ways to put it in front
 * of the real cudart:
 *   - linked into a test program exported to the dynamic symbol table (-Wl,--export-dynamic):
 *     libstreamlike's calls then bind to the program's definitions (test/host/capture_safety.cpp);
 *   - as libstreamlike_fake_cuda.so, preloaded: LD_PRELOAD=.../libstreamlike_fake_cuda.so
 *     python -m pytest ...; a Python test drives it through ctypes.CDLL of the same path.
 *
 * What it models (docs/cuda-graphs.md, "What CUDA does"): streams with an id, flags, priority,
 * device and a capture status (none, active, invalidated), mode and capturing thread; events
 * (where they were recorded: outside any capture, or in capture N); graphs with their user objects;
 * one context per device; each thread's capture interaction mode (cuThreadExchangeStreamCaptureMode
 * and cudaThreadExchangeStreamCaptureMode swap it; global at first, as in CUDA). A call that CUDA
 * lets invalidate a capture does so here too: the capture (every stream in it) becomes invalidated,
 * the call fails with CUDA's code and is recorded as an invalidation. The rules
 * (test/host/fake_cuda_rules.cpp checks each, row by row):
 *   1. on a capturing stream (active or already invalidated), in every mode: cudaStreamGetId/
 *      GetFlags/GetDevice (and cuStreamGetId/GetFlags/GetDevice), cudaStreamQuery/Synchronize (and
 *      cuStreamQuery/Synchronize), cudaGraphLaunch, cudaGraphUpload (cudaErrorStreamCaptureUnsupported),
 *      cudaStreamBeginCapture (cudaErrorIllegalState);
 *   2. cudaStreamWaitEvent/cuStreamWaitEvent by a capturing stream on an event not recorded in its
 *      capture, unless the wait is external (cudaErrorStreamCaptureIsolation);
 *   3. cudaEventQuery/Synchronize/ElapsedTime (and cuEventQuery/Synchronize) of an event last
 *      recorded in a capture still under way, in every mode (cudaErrorCapturedEvent); once that
 *      capture is over they fail with cudaErrorInvalidValue and invalidate nothing;
 *   4. potentially unsafe calls, judged by the calling thread's interaction mode: cudaEventQuery/
 *      Synchronize/ElapsedTime (and cu forms) and cudaStreamQuery/Synchronize (and cu forms) of a
 *      stream outside any capture are prohibited, for a thread in global mode, while it has a
 *      global or thread-local capture under way or any thread has a global one; in thread-local
 *      mode, only for its own; in relaxed mode never (cudaErrorStreamCaptureUnsupported). That
 *      cudaEventElapsedTime is among them is assumed, not measured;
 *   5. cudaDeviceSynchronize while any capture runs, in every mode (it encompasses the capture).
 * Every call, invalidating or not, is also counted by name (fake_cuda_calls).
 *
 * Green contexts (SM partitions), as an H200 makes them: each device has 132 SMs
 * (STREAMLIKE_FAKE_CUDA_SMS, fake_cuda_set_sm_count); cuDevSmResourceSplitByCount makes groups of
 * minCount rounded up to a multiple of 8 (at least 8), as many as fit, and refuses a minCount above
 * the input's count (CUDA_ERROR_INVALID_VALUE) or one no group fits
 * (CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION); cuGreenCtxCreate needs CU_GREEN_CTX_DEFAULT_STREAM
 * and makes a green context with its own CUcontext (cuCtxFromGreenCtx) and context id;
 * cuGreenCtxStreamCreate needs CU_STREAM_NON_BLOCKING and makes a stream that remembers its green
 * context (cuStreamGetGreenCtx; cuStreamGetCtx answers the green context's CUcontext, whose
 * cuCtxGetId, cuCtxGetDevice and cuCtxGetDevResource are the green context's). Destroying a green
 * context leaves its streams alive, as CUDA does; the fake counts them as orphaned.
 *
 * Switches by environment variable, read at the first call (for preloaded use):
 *   STREAMLIKE_FAKE_CUDA_DEVICES=N      the device count (default 1; 0: cudaErrorNoDevice)
 *   STREAMLIKE_FAKE_CUDA_SMS=N          each device's SM count (default 132)
 *   STREAMLIKE_FAKE_CUDA_GREEN_CONTEXTS=0
 *                                       a driver without green contexts: their functions (and
 *                                       the SM resource queries) are not handed out
 *   STREAMLIKE_FAKE_CUDA_CAPTURE=active|invalidated
 *                                       every stream created afterwards starts in that capture
 *                                       (global mode), as if a framework had begun one
 *   STREAMLIKE_FAKE_CUDA_EVENTS=not_ready
 *                                       cudaEventQuery/cuEventQuery answer cudaErrorNotReady
 *                                       (default: ready)
 *   STREAMLIKE_FAKE_CUDA_LOG=PATH       appends one line per call to PATH: "NAME" for a call,
 *                                       "INVALIDATED NAME" for a call that invalidated a capture
 *   STREAMLIKE_FAKE_CUDA_DRIVER_VERSION=N
 *                                       the CUDA version cudaDriverGetVersion reports (e.g. 12080;
 *                                       default: the runtime's); of an older major than the
 *                                       runtime's, stream creation fails with
 *                                       cudaErrorInsufficientDriver, as a real driver's first call;
 *                                       0: no driver at all (libcuda.so.1 absent): no driver function
 *                                       is handed out, and cudaGetDeviceCount, cudaGetDevice and
 *                                       cudaSetDevice answer cudaErrorInsufficientDriver
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

/* The next call named `name` fails with the CUDA error `code` and changes nothing; only
 * "cudaStreamDestroy" and "cuStreamDestroy" can be made to fail. Returns 0, or -1 for another name. */
int fake_cuda_fail_next(const char* name, int code);

/* The calling thread's capture interaction mode (cudaStreamCaptureMode), as the fake keeps it. */
int fake_cuda_thread_capture_mode(void);

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

/* How many green contexts live; how many streams were alive when their green context was
 * destroyed (ever); the green context a stream was made in (null for a plain one). */
long fake_cuda_live_green_contexts(void);
long fake_cuda_orphaned_green_streams(void);
void* fake_cuda_green_context_of(void* stream);

/* The next green context cuGreenCtxCreate makes has the handle `green_context` (a destroyed one's),
 * as a driver may reuse a freed address; its context and context id are new. */
void fake_cuda_reuse_green_context_handle(void* green_context);

/* Each device's SM count from now on (132 at the start, or STREAMLIKE_FAKE_CUDA_SMS). */
void fake_cuda_set_sm_count(unsigned int sms);

/* What cudaEventQuery/cuEventQuery answer for `event`: 1 ready, 0 not ready. */
int fake_cuda_set_event_ready(void* event, int ready);

#ifdef __cplusplus
}
#endif

#endif /* STREAMLIKE_TEST_FAKE_CUDA_H */
