// The fake CUDA of test/fake_cuda (fake_cuda.h) keeps every invalidation rule it claims to
// model (fake_cuda.h, rules 1-5, from docs/cuda-graphs.md, "What CUDA does"): the checks of
// capture_safety.cpp, event_capture_safety.cpp and capture_interaction.cpp trust it to invalidate
// a capture wherever CUDA would, so a rule that weakened would let a missing refusal pass unseen.
// Raw CUDA calls only, no streamlike: one table row per rule and case, each saying whether the
// call invalidates the capture and which code it fails with.
#include "../fake_cuda/fake_cuda.h"
#include "fake_cuda_support.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <thread>

namespace {

using host_test::new_stream;

cudaEvent_t new_event() {
  cudaEvent_t event = nullptr;
  REQUIRE(cudaEventCreate(&event) == cudaSuccess);
  return event;
}

// A driver function of the fake, as libstreamlike fetches it.
template <class Fn>
Fn driver(const char* name, unsigned int version = 12000) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  REQUIRE(cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &status) == cudaSuccess);
  REQUIRE_MESSAGE(fn != nullptr, name, " is not faked");
  return reinterpret_cast<Fn>(fn);
}

int as_int(CUresult r) { return static_cast<int>(r); }

// What one row's call works on: a capturing stream, a stream outside any capture, an event recorded
// outside any capture and one recorded in the capture.
struct scene {
  cudaStream_t capturing = new_stream();
  cudaStream_t idle = new_stream();
  cudaEvent_t before = new_event();
  cudaEvent_t in_capture = new_event();
  cudaGraphExec_t exec = nullptr;
  scene() {
    REQUIRE(cudaEventRecord(before, idle) == cudaSuccess);
    cudaGraph_t graph = nullptr;
    REQUIRE(cudaGraphCreate(&graph, 0) == cudaSuccess);
    REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    REQUIRE(cudaGraphDestroy(graph) == cudaSuccess);
  }
  scene(const scene&) = delete;
  scene& operator=(const scene&) = delete;
  ~scene() {
    (void)fake_cuda_set_capture(capturing, fake_cuda_none, 0);
    (void)cudaGraphExecDestroy(exec);
    (void)cudaEventDestroy(before);
    (void)cudaEventDestroy(in_capture);
    (void)cudaStreamDestroy(capturing);
    (void)cudaStreamDestroy(idle);
    (void)cudaGetLastError();
  }
};

using call = std::function<int(scene&)>; // the call's result, as an int (cudaError_t or CUresult)

struct call_case {
  const char* name;
  call make;
};

// Rule 1: calls on the capturing stream itself.
const call_case on_capturing_stream[] = {
    {"cudaStreamGetId",
     [](scene& s) {
       unsigned long long id = 0;
       return int(cudaStreamGetId(s.capturing, &id));
     }},
    {"cudaStreamGetFlags",
     [](scene& s) {
       unsigned int f = 0;
       return int(cudaStreamGetFlags(s.capturing, &f));
     }},
    {"cudaStreamGetDevice",
     [](scene& s) {
       int d = 0;
       return int(cudaStreamGetDevice(s.capturing, &d));
     }},
    {"cuStreamGetId",
     [](scene& s) {
       unsigned long long id = 0;
       return as_int(driver<CUresult (*)(CUstream, unsigned long long*)>("cuStreamGetId")(s.capturing, &id));
     }},
    {"cuStreamGetFlags",
     [](scene& s) {
       unsigned int f = 0;
       return as_int(driver<CUresult (*)(CUstream, unsigned int*)>("cuStreamGetFlags")(s.capturing, &f));
     }},
    {"cuStreamGetDevice",
     [](scene& s) {
       CUdevice d = 0;
       return as_int(driver<CUresult (*)(CUstream, CUdevice*)>("cuStreamGetDevice")(s.capturing, &d));
     }},
    {"cudaStreamQuery", [](scene& s) { return int(cudaStreamQuery(s.capturing)); }},
    {"cudaStreamSynchronize", [](scene& s) { return int(cudaStreamSynchronize(s.capturing)); }},
    {"cuStreamQuery", [](scene& s) { return as_int(driver<CUresult (*)(CUstream)>("cuStreamQuery")(s.capturing)); }},
    {"cuStreamSynchronize",
     [](scene& s) { return as_int(driver<CUresult (*)(CUstream)>("cuStreamSynchronize")(s.capturing)); }},
    {"cudaGraphLaunch", [](scene& s) { return int(cudaGraphLaunch(s.exec, s.capturing)); }},
    {"cudaGraphUpload", [](scene& s) { return int(cudaGraphUpload(s.exec, s.capturing)); }},
    {"cudaStreamBeginCapture",
     [](scene& s) { return int(cudaStreamBeginCapture(s.capturing, cudaStreamCaptureModeRelaxed)); }},
    // Rule 2: a capturing stream waiting on an event recorded outside its capture.
    {"cudaStreamWaitEvent", [](scene& s) { return int(cudaStreamWaitEvent(s.capturing, s.before, 0)); }},
    {"cuStreamWaitEvent",
     [](scene& s) {
       return as_int(
           driver<CUresult (*)(CUstream, CUevent, unsigned int)>("cuStreamWaitEvent")(s.capturing, s.before, 0));
     }},
    // Rule 3: asking an event recorded in the capture under way.
    {"cudaEventQuery (in the capture)", [](scene& s) { return int(cudaEventQuery(s.in_capture)); }},
    {"cudaEventSynchronize (in the capture)", [](scene& s) { return int(cudaEventSynchronize(s.in_capture)); }},
    {"cudaEventElapsedTime (in the capture)",
     [](scene& s) {
       float ms = 0;
       return int(cudaEventElapsedTime(&ms, s.in_capture, s.in_capture));
     }},
    {"cuEventQuery (in the capture)",
     [](scene& s) { return as_int(driver<CUresult (*)(CUevent)>("cuEventQuery")(s.in_capture)); }},
    {"cuEventSynchronize (in the capture)",
     [](scene& s) { return as_int(driver<CUresult (*)(CUevent)>("cuEventSynchronize")(s.in_capture)); }},
    // Rule 5: synchronizing the device, which encompasses the capture.
    {"cudaDeviceSynchronize", [](scene&) { return int(cudaDeviceSynchronize()); }},
};

// Rule 4: potentially unsafe calls that touch nothing of the capture.
const call_case potentially_unsafe[] = {
    {"cudaEventQuery", [](scene& s) { return int(cudaEventQuery(s.before)); }},
    {"cudaEventSynchronize", [](scene& s) { return int(cudaEventSynchronize(s.before)); }},
    {"cudaEventElapsedTime",
     [](scene& s) {
       float ms = 0;
       return int(cudaEventElapsedTime(&ms, s.before, s.before));
     }},
    {"cuEventQuery", [](scene& s) { return as_int(driver<CUresult (*)(CUevent)>("cuEventQuery")(s.before)); }},
    {"cuEventSynchronize",
     [](scene& s) { return as_int(driver<CUresult (*)(CUevent)>("cuEventSynchronize")(s.before)); }},
    {"cudaStreamQuery (another stream)", [](scene& s) { return int(cudaStreamQuery(s.idle)); }},
    {"cudaStreamSynchronize (another stream)", [](scene& s) { return int(cudaStreamSynchronize(s.idle)); }},
    {"cuStreamQuery (another stream)",
     [](scene& s) { return as_int(driver<CUresult (*)(CUstream)>("cuStreamQuery")(s.idle)); }},
    {"cuStreamSynchronize (another stream)",
     [](scene& s) { return as_int(driver<CUresult (*)(CUstream)>("cuStreamSynchronize")(s.idle)); }},
};

constexpr int modes[] = {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed};
const char* mode_name(int mode) {
  return mode == cudaStreamCaptureModeGlobal        ? "global"
         : mode == cudaStreamCaptureModeThreadLocal ? "thread-local"
                                                    : "relaxed";
}

// Puts s.capturing in a capture of `mode` begun by this thread or by another one, and records
// s.in_capture in it.
void begin(scene& s, int status, int mode, bool by_this_thread) {
  if (by_this_thread) {
    REQUIRE(fake_cuda_set_capture(s.capturing, fake_cuda_active, mode) == 0);
  } else {
    int result = -1;
    std::thread([&] { result = fake_cuda_set_capture(s.capturing, fake_cuda_active, mode); }).join();
    REQUIRE(result == 0);
  }
  REQUIRE(cudaEventRecord(s.in_capture, s.capturing) == cudaSuccess);
  if (status == fake_cuda_invalidated) REQUIRE(fake_cuda_set_capture(s.capturing, fake_cuda_invalidated, mode) == 0);
}

// Sets the calling thread's interaction mode for the scope, through the runtime's call.
struct interaction_mode {
  cudaStreamCaptureMode previous;
  explicit interaction_mode(int mode) : previous(static_cast<cudaStreamCaptureMode>(mode)) {
    REQUIRE(cudaThreadExchangeStreamCaptureMode(&previous) == cudaSuccess);
  }
  interaction_mode(const interaction_mode&) = delete;
  interaction_mode& operator=(const interaction_mode&) = delete;
  ~interaction_mode() { (void)cudaThreadExchangeStreamCaptureMode(&previous); }
};

// Runs `c` in the scene and checks: invalidated (the capture became invalidated, the call failed
// with a capture error and was recorded) or not (nothing recorded, the capture as it was).
void check_row(const call_case& c, int status, int mode, bool by_this_thread, int thread_mode, bool invalidates) {
  scene s;
  begin(s, status, mode, by_this_thread);
  const interaction_mode set(thread_mode);
  fake_cuda_reset_log();
  INFO(c.name, ", capture ", mode_name(mode), status == fake_cuda_invalidated ? " (already invalidated)" : "",
       " begun by ", by_this_thread ? "this thread" : "another thread", ", calling thread in ", mode_name(thread_mode),
       " interaction mode");
  const int result = c.make(s);
  CHECK_MESSAGE((fake_cuda_invalidations() == 1) == invalidates, "recorded invalidations: ", fake_cuda_invalidations());
  if (invalidates) {
    CHECK(result != 0);
    CHECK(fake_cuda_capture_status(s.capturing) == fake_cuda_invalidated);
  } else {
    CHECK(fake_cuda_capture_status(s.capturing) == status);
  }
  (void)cudaGetLastError();
}

} // namespace

TEST_CASE("the fake's thread interaction mode: global at first, swapped by the runtime's and the driver's call") {
  int seen = -1;
  std::thread([&] { seen = fake_cuda_thread_capture_mode(); }).join();
  CHECK(seen == cudaStreamCaptureModeGlobal);
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  REQUIRE(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);
  CHECK(mode == cudaStreamCaptureModeGlobal);
  CHECK(fake_cuda_thread_capture_mode() == cudaStreamCaptureModeRelaxed);
  const auto exchange = driver<CUresult (*)(CUstreamCaptureMode*)>("cuThreadExchangeStreamCaptureMode");
  CUstreamCaptureMode driver_mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
  REQUIRE(exchange(&driver_mode) == CUDA_SUCCESS);
  CHECK(driver_mode == CU_STREAM_CAPTURE_MODE_RELAXED);
  CHECK(fake_cuda_thread_capture_mode() == cudaStreamCaptureModeThreadLocal);
  driver_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  REQUIRE(exchange(&driver_mode) == CUDA_SUCCESS);
  // Another thread's mode is its own.
  std::thread([&] { seen = fake_cuda_thread_capture_mode(); }).join();
  CHECK(seen == cudaStreamCaptureModeGlobal);
}

TEST_CASE("rules 1, 2, 3, 5: calls on the capture itself invalidate it in every mode, whoever captures") {
  for (const call_case& c : on_capturing_stream) {
    for (const int mode : modes) {
      for (const bool by_this_thread : {true, false}) {
        for (const int thread_mode : modes) check_row(c, fake_cuda_active, mode, by_this_thread, thread_mode, true);
      }
    }
  }
}

TEST_CASE("rule 1 on an invalidated capture: the call is still refused and recorded") {
  for (const call_case& c : on_capturing_stream) {
    if (std::string(c.name).find("in the capture") != std::string::npos) continue; // rule 3: below
    if (std::string(c.name) == "cudaDeviceSynchronize") continue;                  // rule 5: active only
    if (std::string(c.name).find("WaitEvent") != std::string::npos) continue;
    for (const int mode : modes) check_row(c, fake_cuda_invalidated, mode, true, cudaStreamCaptureModeGlobal, true);
  }
}

TEST_CASE("rule 2: waits that join the capture, external waits and forks invalidate nothing") {
  for (const int mode : modes) {
    scene s;
    begin(s, fake_cuda_active, mode, true);
    fake_cuda_reset_log();
    CHECK(cudaStreamWaitEvent(s.capturing, s.in_capture, 0) == cudaSuccess);                 // a join
    CHECK(cudaStreamWaitEvent(s.capturing, s.before, cudaEventWaitExternal) == cudaSuccess); // external
    CHECK(cudaStreamWaitEvent(s.idle, s.in_capture, 0) == cudaSuccess);                      // a fork
    CHECK(fake_cuda_capture_status(s.idle) == fake_cuda_active);
    CHECK(fake_cuda_invalidations() == 0);
    REQUIRE(fake_cuda_set_capture(s.idle, fake_cuda_none, 0) == 0);
  }
}

TEST_CASE("rule 3 after the capture: an event recorded in it is refused (cudaErrorInvalidValue), nothing recorded") {
  scene s;
  begin(s, fake_cuda_active, cudaStreamCaptureModeGlobal, true);
  REQUIRE(fake_cuda_set_capture(s.capturing, fake_cuda_none, 0) == 0);
  fake_cuda_reset_log();
  CHECK(cudaEventQuery(s.in_capture) == cudaErrorInvalidValue);
  CHECK(cudaEventSynchronize(s.in_capture) == cudaErrorInvalidValue);
  CHECK(fake_cuda_invalidations() == 0);
  (void)cudaGetLastError();
  // Recorded again outside a capture, it answers.
  REQUIRE(cudaEventRecord(s.in_capture, s.idle) == cudaSuccess);
  CHECK(cudaEventQuery(s.in_capture) == cudaSuccess);
}

TEST_CASE("rule 4: potentially unsafe calls, by capture mode, capturing thread and interaction mode") {
  // CUDA's rule (cudaThreadExchangeStreamCaptureMode), written out: does the call invalidate?
  struct row {
    int capture_mode;
    bool by_this_thread;
    bool in_global, in_thread_local, in_relaxed; // the calling thread's interaction mode
  };
  constexpr row table[] = {
      {cudaStreamCaptureModeGlobal, true, true, true, false},
      {cudaStreamCaptureModeGlobal, false, true, false, false},
      {cudaStreamCaptureModeThreadLocal, true, true, true, false},
      {cudaStreamCaptureModeThreadLocal, false, false, false, false},
      {cudaStreamCaptureModeRelaxed, true, false, false, false},
      {cudaStreamCaptureModeRelaxed, false, false, false, false},
  };
  for (const call_case& c : potentially_unsafe) {
    for (const row& r : table) {
      check_row(c, fake_cuda_active, r.capture_mode, r.by_this_thread, cudaStreamCaptureModeGlobal, r.in_global);
      check_row(c, fake_cuda_active, r.capture_mode, r.by_this_thread, cudaStreamCaptureModeThreadLocal,
                r.in_thread_local);
      check_row(c, fake_cuda_active, r.capture_mode, r.by_this_thread, cudaStreamCaptureModeRelaxed, r.in_relaxed);
    }
  }
}

TEST_CASE("rule 4: the same calls with no capture under way answer") {
  scene s;
  fake_cuda_reset_log();
  for (const call_case& c : potentially_unsafe) {
    INFO(c.name);
    CHECK(c.make(s) == 0);
  }
  CHECK(fake_cuda_invalidations() == 0);
}

TEST_CASE("calls CUDA allows on a capturing stream invalidate nothing") {
  for (const int mode : modes) {
    scene s;
    begin(s, fake_cuda_active, mode, true);
    fake_cuda_reset_log();
    int priority = 0;
    CHECK(cudaStreamGetPriority(s.capturing, &priority) == cudaSuccess);
    cudaStreamCaptureStatus status{};
    CHECK(cudaStreamIsCapturing(s.capturing, &status) == cudaSuccess);
    CHECK(status == cudaStreamCaptureStatusActive);
    CUcontext ctx = nullptr;
    CHECK(driver<CUresult (*)(CUstream, CUcontext*)>("cuStreamGetCtx")(s.capturing, &ctx) == CUDA_SUCCESS);
    CUdevice device = -1;
    CHECK(driver<CUresult (*)(CUdevice*, CUcontext)>("cuCtxGetDevice", 13000)(&device, ctx) == CUDA_SUCCESS);
    CHECK(device == 0);
    CHECK(cudaEventRecord(s.before, s.capturing) == cudaSuccess);
    cudaEvent_t made = new_event();
    CHECK(cudaEventDestroy(made) == cudaSuccess);
    cudaStream_t other = new_stream();
    CHECK(cudaStreamDestroy(other) == cudaSuccess);
    CHECK(fake_cuda_invalidations() == 0);
  }
}

TEST_CASE("fake_cuda_fail_next: a refused destroy leaves the stream alive") {
  const cudaStream_t s = new_stream();
  const long live = fake_cuda_live_streams();
  REQUIRE(fake_cuda_fail_next("cudaStreamDestroy", cudaErrorInvalidValue) == 0);
  CHECK(cudaStreamDestroy(s) == cudaErrorInvalidValue);
  (void)cudaGetLastError();
  CHECK(fake_cuda_live_streams() == live);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(fake_cuda_live_streams() == live - 1);
  CHECK(fake_cuda_fail_next("cudaEventDestroy", 1) == -1);
}
