// The capture rules of streamcheck (src/streamcheck/capture_rules.cpp) against CUDA itself: each
// call a capture may punish is made during a capture, and CUDA's verdict on it (the call's result,
// and whether the capture was invalidated: cuStreamIsCapturing right after the call, then
// cuStreamEndCapture) is compared with the checker's (the program runs under the real checker,
// libstreamlike_check.so injected with STREAMLIKE_CHECK=capture, which says what it decided about
// that one call: streamlike_check_last_verdict). Both ways: no report where CUDA allowed the call
// and the capture survived, a report where CUDA refused it or the capture was invalidated.
//
// The table: each call (syncs and queries of streams and events, the context's sync, synchronous
// copies and memsets by memory kind, allocation and free, plain and stream-ordered, work on the
// legacy stream; the streams named by role: the capture's, one forked into it by an event, an
// unrelated one, the legacy one, the caller's per-thread one) x the capture's stream (blocking,
// non-blocking, the capturing thread's per-thread default stream, begun through the _ptsz entry
// point) x capture mode x caller (the capturing thread; another thread; another thread capturing its
// own per-thread default stream meanwhile, in the same mode) x the caller's interaction mode
// (cuThreadExchangeStreamCaptureMode). Every cell is a capture of its own, its streams and events
// made for it and destroyed after it.
//
//   capture_verdicts LIBRARY [FILTER]   LIBRARY: libstreamlike_check.so; FILTER: only the cells
//                                       whose line (call | capture | caller) contains it
// It re-executes itself with CUDA_INJECTION64_PATH=LIBRARY and STREAMLIKE_CHECK=capture (the
// reports go to STREAMLIKE_CHECK_OUTPUT if set, else nowhere: the verdicts are what is compared).
// Prints one line per cell, then every disagreement; exits 1 if there is any (or a cell could not
// be set up), 77 without a device or without the library, 2 on bad arguments.
#include "../gpu/device_presence.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

__global__ void touch(int* p) { *p += 1; }

// The driver, through the runtime's entry-point query: the program links no libcuda, so it starts
// (and skips) where there is none. 12000: each symbol's ABI as of CUDA 12.0.
#define CAPTURE_VERDICTS_DRIVER_CALLS(X) \
  X(cuInit);                             \
  X(cuDeviceGet);                        \
  X(cuDevicePrimaryCtxRetain);           \
  X(cuCtxSetCurrent);                    \
  X(cuCtxSynchronize);                   \
  X(cuStreamCreate);                     \
  X(cuStreamDestroy);                    \
  X(cuStreamSynchronize);                \
  X(cuStreamQuery);                      \
  X(cuStreamWaitEvent);                  \
  X(cuStreamBeginCapture);               \
  X(cuStreamEndCapture);                 \
  X(cuStreamIsCapturing);                \
  X(cuThreadExchangeStreamCaptureMode);  \
  X(cuEventCreate);                      \
  X(cuEventDestroy);                     \
  X(cuEventRecord);                      \
  X(cuEventSynchronize);                 \
  X(cuEventQuery);                       \
  X(cuGraphDestroy);                     \
  X(cuLaunchKernel);                     \
  X(cuMemAlloc);                         \
  X(cuMemFree);                          \
  X(cuMemAllocHost);                     \
  X(cuMemFreeHost);                      \
  X(cuMemAllocAsync);                    \
  X(cuMemFreeAsync);                     \
  X(cuMemcpyHtoD);                       \
  X(cuMemcpyDtoH);                       \
  X(cuMemcpyDtoD);                       \
  X(cuMemcpyHtoDAsync);                  \
  X(cuMemsetD8);                         \
  X(cuGetErrorName);

struct driver_calls {
#define CAPTURE_VERDICTS_DECLARE(name) decltype(&name) name##_ = nullptr
  CAPTURE_VERDICTS_DRIVER_CALLS(CAPTURE_VERDICTS_DECLARE)
#undef CAPTURE_VERDICTS_DECLARE
  // The per-thread entry points (_ptsz): handle 0 names the calling thread's per-thread stream.
  decltype(&cuStreamBeginCapture) begin_capture_ptsz = nullptr;
  decltype(&cuStreamEndCapture) end_capture_ptsz = nullptr;
  decltype(&cuStreamIsCapturing) is_capturing_ptsz = nullptr;
};
driver_calls d;

template <class F>
bool resolve(F& f, const char* name, unsigned long long flags) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion(name, &address, 12000, flags, &status) != cudaSuccess ||
      status != cudaDriverEntryPointSuccess || address == nullptr) {
    (void)cudaGetLastError();
    std::fprintf(stderr, "capture_verdicts: FAIL: no driver entry point %s%s\n", name,
                 flags == cudaEnablePerThreadDefaultStream ? " (per-thread)" : "");
    return false;
  }
  f = reinterpret_cast<F>(address);
  return true;
}

bool resolve_driver() {
  bool all = true;
#define CAPTURE_VERDICTS_RESOLVE(name) all = resolve(d.name##_, #name, cudaEnableDefault) && all
  CAPTURE_VERDICTS_DRIVER_CALLS(CAPTURE_VERDICTS_RESOLVE)
#undef CAPTURE_VERDICTS_RESOLVE
  all = resolve(d.begin_capture_ptsz, "cuStreamBeginCapture", cudaEnablePerThreadDefaultStream) && all;
  all = resolve(d.end_capture_ptsz, "cuStreamEndCapture", cudaEnablePerThreadDefaultStream) && all;
  all = resolve(d.is_capturing_ptsz, "cuStreamIsCapturing", cudaEnablePerThreadDefaultStream) && all;
  return all;
}

std::string error_name(CUresult r) {
  const char* name = nullptr;
  if (d.cuGetErrorName_ == nullptr || d.cuGetErrorName_(r, &name) != CUDA_SUCCESS || name == nullptr)
    return "CUresult " + std::to_string(static_cast<int>(r));
  return name;
}

// The checker's answer on the calling thread's last judged call (-1: none since the last ask).
int (*last_verdict)() = nullptr;

constexpr std::size_t bytes = 4096;
CUcontext context = nullptr;
CUfunction touch_function = nullptr;
CUdeviceptr device_a = 0, device_b = 0;
void* pinned = nullptr;
std::vector<char> pageable(bytes);

// Another thread, with the context current, that runs what it is given and returns when done.
class other_thread {
public:
  other_thread() : thread_([this] { loop(); }) {}
  other_thread(const other_thread&) = delete;
  other_thread& operator=(const other_thread&) = delete;
  ~other_thread() {
    {
      const std::lock_guard lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void run(const std::function<void()>& job) {
    std::unique_lock lock(mutex_);
    job_ = &job;
    wake_.notify_all();
    wake_.wait(lock, [this] { return job_ == nullptr; });
  }

private:
  void loop() {
    (void)d.cuCtxSetCurrent_(context);
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return quit_ || job_ != nullptr; });
      if (job_ == nullptr) return;
      (*job_)();
      job_ = nullptr;
      wake_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  const std::function<void()>* job_ = nullptr;
  bool quit_ = false;
  std::thread thread_;
};

enum class capture_stream { blocking, non_blocking, per_thread };
const char* name_of(capture_stream s) {
  switch (s) {
    case capture_stream::blocking: return "blocking stream";
    case capture_stream::non_blocking: return "non-blocking stream";
    case capture_stream::per_thread: return "per-thread stream";
  }
  return "?";
}
enum class caller { capturer, other, other_capturing };
const char* name_of(caller c) {
  switch (c) {
    case caller::capturer: return "capturing thread";
    case caller::other: return "other thread";
    case caller::other_capturing: return "other thread capturing its per-thread stream";
  }
  return "?";
}
const char* name_of(CUstreamCaptureMode m) {
  switch (m) {
    case CU_STREAM_CAPTURE_MODE_GLOBAL: return "global";
    case CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: return "thread-local";
    case CU_STREAM_CAPTURE_MODE_RELAXED: return "relaxed";
  }
  return "?";
}
constexpr CUstreamCaptureMode modes[] = {CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                                         CU_STREAM_CAPTURE_MODE_RELAXED};

// What one cell made for its capture.
struct cell {
  CUstream capture = nullptr;   // as the capturing thread names it (CU_STREAM_PER_THREAD for its own)
  CUstream forked = nullptr;    // waits on an event recorded in the capture (for the calls that need it)
  CUstream unrelated = nullptr; // in no capture
  CUevent fork_event = nullptr, join_event = nullptr;
  CUevent event_in = nullptr;         // recorded in the capture
  CUevent event_out = nullptr;        // recorded on `unrelated` before the capture, and complete
  CUdeviceptr plain = 0;              // cuMemAlloc'd before the capture
  CUdeviceptr ordered = 0;            // cuMemAllocAsync'd on `unrelated` before the capture
  CUdeviceptr in_graph = 0;           // cuMemAllocAsync'd on the capture's stream in the capture
  CUdeviceptr allocated = 0;          // what the call allocated (cuMemAlloc), freed after the capture
  CUdeviceptr allocated_ordered = 0;  // the same (cuMemAllocAsync on `unrelated`)
  CUdeviceptr allocated_in_graph = 0; // the same (cuMemAllocAsync on the capture's stream): the graph's
};

enum needs : unsigned {
  nothing = 0,
  fork = 1,
  event_in = 2,
  plain_allocation = 4,
  ordered_allocation = 8,
  graph_allocation = 16,
  names_capture = 32, // names the capture's stream: not from another thread when that is a per-thread stream
};

CUresult launch(CUstream s) {
  void* args[] = {&device_a};
  return d.cuLaunchKernel_(touch_function, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr);
}

struct call {
  const char* name;
  CUresult (*make)(cell& c);
  unsigned needs;
};

const call calls[] = {
    {"cuLaunchKernel(capture's stream)", [](cell& c) { return launch(c.capture); }, names_capture},
    {"cuStreamSynchronize(capture's stream)", [](cell& c) { return d.cuStreamSynchronize_(c.capture); }, names_capture},
    {"cuStreamQuery(capture's stream)", [](cell& c) { return d.cuStreamQuery_(c.capture); }, names_capture},
    {"cuLaunchKernel(forked stream)", [](cell& c) { return launch(c.forked); }, fork},
    {"cuStreamSynchronize(forked stream)", [](cell& c) { return d.cuStreamSynchronize_(c.forked); }, fork},
    {"cuStreamQuery(forked stream)", [](cell& c) { return d.cuStreamQuery_(c.forked); }, fork},
    {"cuStreamSynchronize(unrelated stream)", [](cell& c) { return d.cuStreamSynchronize_(c.unrelated); }, nothing},
    {"cuStreamQuery(unrelated stream)", [](cell& c) { return d.cuStreamQuery_(c.unrelated); }, nothing},
    {"cuStreamSynchronize(CU_STREAM_LEGACY)", [](cell&) { return d.cuStreamSynchronize_(CU_STREAM_LEGACY); }, nothing},
    {"cuStreamQuery(0: legacy)", [](cell&) { return d.cuStreamQuery_(nullptr); }, nothing},
    {"cuStreamSynchronize(CU_STREAM_PER_THREAD)", [](cell&) { return d.cuStreamSynchronize_(CU_STREAM_PER_THREAD); },
     nothing},
    {"cuStreamQuery(CU_STREAM_PER_THREAD)", [](cell&) { return d.cuStreamQuery_(CU_STREAM_PER_THREAD); }, nothing},
    {"cuLaunchKernel(CU_STREAM_PER_THREAD)", [](cell&) { return launch(CU_STREAM_PER_THREAD); }, nothing},
    {"cuEventSynchronize(event recorded in the capture)", [](cell& c) { return d.cuEventSynchronize_(c.event_in); },
     event_in},
    {"cuEventQuery(event recorded in the capture)", [](cell& c) { return d.cuEventQuery_(c.event_in); }, event_in},
    {"cuEventSynchronize(event recorded outside)", [](cell& c) { return d.cuEventSynchronize_(c.event_out); }, nothing},
    {"cuEventQuery(event recorded outside)", [](cell& c) { return d.cuEventQuery_(c.event_out); }, nothing},
    {"cuCtxSynchronize", [](cell&) { return d.cuCtxSynchronize_(); }, nothing},
    {"cuMemcpyHtoD(from pageable host)", [](cell&) { return d.cuMemcpyHtoD_(device_a, pageable.data(), bytes); },
     nothing},
    {"cuMemcpyHtoD(from pinned host)", [](cell&) { return d.cuMemcpyHtoD_(device_a, pinned, bytes); }, nothing},
    {"cuMemcpyDtoD", [](cell&) { return d.cuMemcpyDtoD_(device_b, device_a, bytes); }, nothing},
    {"cuMemcpyDtoH(into pageable host)", [](cell&) { return d.cuMemcpyDtoH_(pageable.data(), device_a, bytes); },
     nothing},
    {"cuMemcpyDtoH(into pinned host)", [](cell&) { return d.cuMemcpyDtoH_(pinned, device_a, bytes); }, nothing},
    {"cuMemsetD8(device)", [](cell&) { return d.cuMemsetD8_(device_b, 0, bytes); }, nothing},
    {"cuMemAlloc", [](cell& c) { return d.cuMemAlloc_(&c.allocated, bytes); }, nothing},
    {"cuMemFree",
     [](cell& c) {
       const CUresult r = d.cuMemFree_(c.plain);
       if (r == CUDA_SUCCESS) c.plain = 0;
       return r;
     },
     plain_allocation},
    {"cuMemAllocAsync(capture's stream)",
     [](cell& c) { return d.cuMemAllocAsync_(&c.allocated_in_graph, bytes, c.capture); }, names_capture},
    {"cuMemFreeAsync(capture's stream, a graph allocation)",
     [](cell& c) { return d.cuMemFreeAsync_(c.in_graph, c.capture); }, names_capture | graph_allocation},
    {"cuMemAllocAsync(unrelated stream)",
     [](cell& c) { return d.cuMemAllocAsync_(&c.allocated_ordered, bytes, c.unrelated); }, nothing},
    {"cuMemFreeAsync(unrelated stream)",
     [](cell& c) {
       const CUresult r = d.cuMemFreeAsync_(c.ordered, c.unrelated);
       if (r == CUDA_SUCCESS) c.ordered = 0;
       return r;
     },
     ordered_allocation},
    {"cuLaunchKernel(0: legacy)", [](cell&) { return launch(nullptr); }, nothing},
    {"cuMemcpyHtoDAsync(CU_STREAM_LEGACY, pinned)",
     [](cell&) { return d.cuMemcpyHtoDAsync_(device_a, pinned, bytes, CU_STREAM_LEGACY); }, nothing},
};

struct verdicts {
  std::string line;  // the cell's row
  bool agree = true; // CUDA and the checker agree
  std::string setup; // non-empty: the cell could not be set up or undone (what failed)
};

// CUDA's verdict on the capture of `stream` (through `is_capturing`, the plain or _ptsz entry).
bool invalidated(CUstreamCaptureStatus status) { return status == CU_STREAM_CAPTURE_STATUS_INVALIDATED; }

class table {
public:
  explicit table(const char* filter) : filter_(filter) {}

  int run_all() {
    for (const call& k : calls)
      for (capture_stream s : {capture_stream::blocking, capture_stream::non_blocking, capture_stream::per_thread})
        for (CUstreamCaptureMode mode : modes)
          for (caller who : {caller::capturer, caller::other, caller::other_capturing})
            for (CUstreamCaptureMode interaction : modes) {
              const std::string where = std::string(k.name) + " | capture of a " + name_of(s) + " in " + name_of(mode) +
                                        " mode | " + name_of(who) + " in " + name_of(interaction) + " interaction mode";
              if (filter_ != nullptr && where.find(filter_) == std::string::npos) continue;
              // Another thread cannot name the capturing thread's per-thread stream.
              if ((k.needs & names_capture) != 0 && s == capture_stream::per_thread && who != caller::capturer) {
                ++not_applicable_;
                continue;
              }
              const verdicts v = run_cell(k, s, mode, who, interaction, where);
              std::printf("%s\n", v.line.c_str());
              std::fflush(stdout);
              auto& per_call = per_call_[k.name];
              ++per_call.first;
              if (!v.setup.empty()) {
                failures_.push_back(v.line);
                ++setup_failures_;
              } else if (!v.agree) {
                failures_.push_back(v.line);
                ++per_call.second;
              }
              ++cells_;
              if (fatal_) return report();
            }
    return report();
  }

private:
  verdicts run_cell(const call& k, capture_stream s, CUstreamCaptureMode mode, caller who,
                    CUstreamCaptureMode interaction, const std::string& where) {
    verdicts out;
    cell c;
    std::string setup;
    const auto need = [&](CUresult r, const char* what) {
      if (r != CUDA_SUCCESS && setup.empty()) setup = std::string(what) + ": " + error_name(r);
      return r == CUDA_SUCCESS;
    };
    const bool own_per_thread = s == capture_stream::per_thread;
    const auto is_capturing = [&](CUstreamCaptureStatus* status) {
      return own_per_thread ? d.is_capturing_ptsz(nullptr, status) : d.cuStreamIsCapturing_(c.capture, status);
    };
    // Before the capture.
    need(d.cuStreamCreate_(&c.unrelated, CU_STREAM_DEFAULT), "cuStreamCreate(unrelated)");
    need(d.cuStreamCreate_(&c.forked, CU_STREAM_DEFAULT), "cuStreamCreate(forked)");
    if (s == capture_stream::per_thread)
      c.capture = CU_STREAM_PER_THREAD;
    else
      need(d.cuStreamCreate_(&c.capture, s == capture_stream::blocking ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING),
           "cuStreamCreate(capture)");
    for (CUevent* e : {&c.fork_event, &c.join_event, &c.event_in, &c.event_out})
      need(d.cuEventCreate_(e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    if (setup.empty()) {
      need(d.cuEventRecord_(c.event_out, c.unrelated), "cuEventRecord(outside)");
      if ((k.needs & plain_allocation) != 0) need(d.cuMemAlloc_(&c.plain, bytes), "cuMemAlloc(before)");
      if ((k.needs & ordered_allocation) != 0)
        need(d.cuMemAllocAsync_(&c.ordered, bytes, c.unrelated), "cuMemAllocAsync(before)");
      need(d.cuStreamSynchronize_(c.unrelated), "cuStreamSynchronize(unrelated, before)");
    }
    // The capture, and what the call needs in it.
    bool begun = false;
    if (setup.empty()) {
      begun = need(own_per_thread ? d.begin_capture_ptsz(nullptr, mode) : d.cuStreamBeginCapture_(c.capture, mode),
                   "cuStreamBeginCapture");
    }
    if (begun) {
      if ((k.needs & fork) != 0) {
        need(d.cuEventRecord_(c.fork_event, c.capture), "cuEventRecord(fork)");
        need(d.cuStreamWaitEvent_(c.forked, c.fork_event, 0), "cuStreamWaitEvent(fork)");
      }
      if ((k.needs & event_in) != 0) need(d.cuEventRecord_(c.event_in, c.capture), "cuEventRecord(in the capture)");
      if ((k.needs & graph_allocation) != 0)
        need(d.cuMemAllocAsync_(&c.in_graph, bytes, c.capture), "cuMemAllocAsync(in the capture)");
      CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
      if (need(is_capturing(&status), "cuStreamIsCapturing(before the call)") &&
          status != CU_STREAM_CAPTURE_STATUS_ACTIVE && setup.empty())
        setup = "the capture is not active before the call";
    }
    // The call, by its caller, in its interaction mode.
    CUresult result = CUDA_SUCCESS;
    int checker = -1;
    bool own_capture_broken = false;
    std::string own_capture_words;
    if (setup.empty()) {
      const auto act = [&] {
        const bool capturing = who == caller::other_capturing;
        if (capturing) {
          const CUresult r = d.cuStreamBeginCapture_(CU_STREAM_PER_THREAD, mode);
          if (r != CUDA_SUCCESS) {
            setup = "cuStreamBeginCapture(the caller's per-thread stream): " + error_name(r);
            return;
          }
        }
        CUstreamCaptureMode previous = interaction;
        (void)d.cuThreadExchangeStreamCaptureMode_(&previous);
        (void)last_verdict(); // forget the verdicts before this call
        result = k.make(c);
        checker = last_verdict();
        (void)d.cuThreadExchangeStreamCaptureMode_(&previous);
        if (capturing) {
          CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
          (void)d.cuStreamIsCapturing_(CU_STREAM_PER_THREAD, &status);
          CUgraph graph = nullptr;
          const CUresult ended = d.cuStreamEndCapture_(CU_STREAM_PER_THREAD, &graph);
          if (graph != nullptr) (void)d.cuGraphDestroy_(graph);
          own_capture_broken = invalidated(status) || ended != CUDA_SUCCESS;
          if (own_capture_broken)
            own_capture_words = invalidated(status) ? "the caller's capture invalidated"
                                                    : "the caller's capture ended with " + error_name(ended);
          CUstreamCaptureStatus after = CU_STREAM_CAPTURE_STATUS_NONE;
          if (d.cuStreamIsCapturing_(CU_STREAM_PER_THREAD, &after) != CUDA_SUCCESS ||
              after != CU_STREAM_CAPTURE_STATUS_NONE) {
            setup = "the caller's per-thread stream still captures after its end";
            fatal_ = true;
          }
        }
      };
      if (who == caller::capturer)
        act();
      else
        other_.run(act);
    }
    // CUDA's verdict on the capture: right after the call, then at its end.
    CUstreamCaptureStatus status_after = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult ended = CUDA_SUCCESS;
    if (begun) {
      (void)is_capturing(&status_after);
      if ((k.needs & fork) != 0) { // join the forked stream back (fails where the capture was invalidated)
        (void)d.cuEventRecord_(c.join_event, c.forked);
        (void)d.cuStreamWaitEvent_(c.capture, c.join_event, 0);
      }
      CUgraph graph = nullptr;
      ended = own_per_thread ? d.end_capture_ptsz(nullptr, &graph) : d.cuStreamEndCapture_(c.capture, &graph);
      if (graph != nullptr) (void)d.cuGraphDestroy_(graph);
      CUstreamCaptureStatus after = CU_STREAM_CAPTURE_STATUS_NONE;
      if (is_capturing(&after) != CUDA_SUCCESS || after != CU_STREAM_CAPTURE_STATUS_NONE) {
        if (setup.empty()) setup = "the capture's stream still captures after its end";
        if (own_per_thread) fatal_ = true; // the thread's per-thread stream cannot be replaced
      }
    }
    // Undone: what the call or the cell allocated, the streams and events; the context idle.
    if (c.allocated != 0) (void)d.cuMemFree_(c.allocated);
    if (c.allocated_ordered != 0) (void)d.cuMemFreeAsync_(c.allocated_ordered, c.unrelated);
    if (c.ordered != 0) (void)d.cuMemFreeAsync_(c.ordered, c.unrelated);
    if (c.plain != 0) (void)d.cuMemFree_(c.plain);
    for (CUstream st : {c.unrelated, c.forked}) {
      if (st != nullptr) (void)d.cuStreamSynchronize_(st);
    }
    for (CUevent e : {c.fork_event, c.join_event, c.event_in, c.event_out}) {
      if (e != nullptr) (void)d.cuEventDestroy_(e);
    }
    for (CUstream st : {c.unrelated, c.forked}) {
      if (st != nullptr) (void)d.cuStreamDestroy_(st);
    }
    if (!own_per_thread && c.capture != nullptr) (void)d.cuStreamDestroy_(c.capture);
    const CUresult idle = d.cuCtxSynchronize_();
    if (idle != CUDA_SUCCESS && setup.empty()) setup = "cuCtxSynchronize after the cell: " + error_name(idle);
    (void)cudaGetLastError();

    // The verdicts.
    const bool refused = result != CUDA_SUCCESS && result != CUDA_ERROR_NOT_READY;
    const bool broken = invalidated(status_after) || ended != CUDA_SUCCESS;
    std::string cuda;
    if (refused) cuda = "refused (" + error_name(result) + ")";
    if (broken) {
      if (!cuda.empty()) cuda += ", ";
      cuda += invalidated(status_after) ? "capture invalidated" : "capture ended with " + error_name(ended);
    }
    if (own_capture_broken) cuda += (cuda.empty() ? "" : ", ") + own_capture_words;
    if (cuda.empty()) cuda = result == CUDA_ERROR_NOT_READY ? "allowed (not ready), capture intact" : "allowed";
    const bool cuda_objects = refused || broken || own_capture_broken;
    const char* checker_words = checker == 0   ? "no report"
                                : checker == 1 ? "reported"
                                : checker == 2 ? "reported (repeated)"
                                : checker == 3 ? "allowed by the allow-list"
                                               : "did not judge the call";
    const bool checker_objects = checker == 1 || checker == 2;
    out.setup = setup;
    if (!setup.empty()) {
      out.line = where + " | SETUP FAILED: " + setup;
      return out;
    }
    out.agree = checker >= 0 && cuda_objects == checker_objects;
    out.line = where + " | CUDA: " + cuda + " | checker: " + checker_words + " | " + (out.agree ? "agree" : "DISAGREE");
    return out;
  }

  int report() const {
    // The disagreements first, the counts per call last: the end of the output is what a log's tail shows.
    if (!failures_.empty()) {
      std::printf("\ncapture_verdicts: FAILED: %zu of %d cells (%d could not be set up):\n", failures_.size(), cells_,
                  setup_failures_);
      for (const std::string& f : failures_) std::printf("  %s\n", f.c_str());
    }
    std::printf("\ncapture_verdicts: per call: cells, disagreements\n");
    for (const call& k : calls) {
      const auto found = per_call_.find(k.name);
      if (found == per_call_.end()) continue;
      std::printf("  %-52s %4d cells, %4d disagree\n", k.name, found->second.first, found->second.second);
    }
    std::printf("capture_verdicts: %d cells (%d not applicable: another thread cannot name a per-thread stream), "
                "%d disagree, %d could not be set up%s\n",
                cells_, not_applicable_, static_cast<int>(failures_.size()) - setup_failures_, setup_failures_,
                fatal_ ? "; stopped: a per-thread stream stayed captured" : "");
    if (cells_ == 0) {
      std::printf("capture_verdicts: FAILED: no cell matches the filter '%s'\n", filter_ != nullptr ? filter_ : "");
      return 1;
    }
    return failures_.empty() ? 0 : 1;
  }

  const char* filter_;
  other_thread other_;
  int cells_ = 0, not_applicable_ = 0, setup_failures_ = 0;
  bool fatal_ = false;
  std::vector<std::string> failures_;
  std::map<std::string, std::pair<int, int>> per_call_;
};

// Runs this program again with the checker injected (before any CUDA call: the driver loads the
// library when it initializes).
[[noreturn]] void run_under_checker(const char* library, char** argv) {
  setenv("CUDA_INJECTION64_PATH", library, 1);
  setenv("STREAMLIKE_CHECK", "capture", 1);
  setenv("STREAMLIKE_CAPTURE_VERDICTS_CHECKED", "1", 1);
  if (std::getenv("STREAMLIKE_CHECK_OUTPUT") == nullptr) setenv("STREAMLIKE_CHECK_OUTPUT", "/dev/null", 1);
  unsetenv("STREAMLIKE_CHECK_FAIL");
  unsetenv("STREAMLIKE_CHECK_ALLOW");
  execv("/proc/self/exe", argv);
  std::fprintf(stderr, "capture_verdicts: FAIL: cannot run itself again under the checker: %s\n", std::strerror(errno));
  std::exit(1);
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || argv[1][0] == '\0' || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: capture_verdicts LIBRARY [FILTER]  (LIBRARY: libstreamlike_check.so)\n");
    return 2;
  }
  char library[PATH_MAX];
  if (realpath(argv[1], library) == nullptr || access(library, R_OK) != 0) {
    std::fprintf(stderr, "capture_verdicts: no checker library at %s (%s): skipping (exit %d)\n", argv[1],
                 std::strerror(errno), gpu_test::skip_exit_code);
    return gpu_test::skip_exit_code;
  }
  const char* checked = std::getenv("STREAMLIKE_CAPTURE_VERDICTS_CHECKED");
  if (checked == nullptr || std::strcmp(checked, "1") != 0) run_under_checker(library, argv);

  int devices = 0;
  if (const int code = gpu_test::check_devices("capture_verdicts", 1, devices); code >= 0) return code;
  if (!resolve_driver()) return 1;
  CUdevice device = 0;
  if (d.cuInit_(0) != CUDA_SUCCESS || d.cuDeviceGet_(&device, 0) != CUDA_SUCCESS ||
      d.cuDevicePrimaryCtxRetain_(&context, device) != CUDA_SUCCESS || d.cuCtxSetCurrent_(context) != CUDA_SUCCESS ||
      cudaSetDevice(0) != cudaSuccess) {
    std::fprintf(stderr, "capture_verdicts: FAIL: cannot make device 0's primary context current\n");
    return 1;
  }
  // The checker the driver loaded (local to itself: looked up in it).
  void* checker = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  auto* active = checker != nullptr ? reinterpret_cast<int (*)()>(dlsym(checker, "streamlike_check_active")) : nullptr;
  last_verdict =
      checker != nullptr ? reinterpret_cast<int (*)()>(dlsym(checker, "streamlike_check_last_verdict")) : nullptr;
  if (active == nullptr || last_verdict == nullptr || active() != 1) {
    std::fprintf(stderr,
                 "capture_verdicts: FAIL: the checker is not running in this process (CUDA_INJECTION64_PATH=%s: %s)\n",
                 library,
                 checker == nullptr        ? "not loaded by the driver"
                 : last_verdict == nullptr ? "no streamlike_check_last_verdict in it"
                 : active == nullptr       ? "no streamlike_check_active in it"
                                           : "loaded, not active");
    return 1;
  }
  // What the calls copy, set and launch, made once.
  cudaFunction_t function = nullptr;
  if (cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(touch)) != cudaSuccess ||
      d.cuMemAlloc_(&device_a, bytes) != CUDA_SUCCESS || d.cuMemAlloc_(&device_b, bytes) != CUDA_SUCCESS ||
      d.cuMemAllocHost_(&pinned, bytes) != CUDA_SUCCESS || d.cuMemsetD8_(device_a, 0, bytes) != CUDA_SUCCESS) {
    std::fprintf(stderr, "capture_verdicts: FAIL: cannot set up the kernel and the buffers\n");
    return 1;
  }
  touch_function = reinterpret_cast<CUfunction>(function);
  if (launch(CU_STREAM_LEGACY) != CUDA_SUCCESS || d.cuCtxSynchronize_() != CUDA_SUCCESS) { // loads the module
    std::fprintf(stderr, "capture_verdicts: FAIL: the kernel does not run\n");
    return 1;
  }
  int code = 0;
  {
    table t(argc == 3 ? argv[2] : nullptr);
    code = t.run_all();
  }
  (void)d.cuMemFreeHost_(pinned);
  (void)d.cuMemFree_(device_a);
  (void)d.cuMemFree_(device_b);
  return code;
}
