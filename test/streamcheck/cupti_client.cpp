// The driver's side of the CUPTI layer, for cupti_loading.py on a CPU: loads libstreamlike_check.so
// and calls InitializeInjection as the driver does, then, through the fake libcupti
// (fake_cupti.cpp), makes the callbacks of a capture that CUDA 13.3's cuStreamBeginRecaptureToGraph
// begins and of a cuStreamSynchronize of its stream (a capture breaker), copying the process's
// record after each step; then the three states of streamlike_check_set_paused. Prints what it
// saw, one "key value" per line.
//
// usage: cupti_client CHECKER FAKE_CUPTI [SNAPSHOT_DIR]
#include <cupti.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>

namespace {

// cuStreamBeginRecaptureToGraph's parameters, in its order (CUstream, CUstreamCaptureMode, CUgraph,
// CUgraphRecaptureCallback, void*), as CUPTI lays out every call's.
struct recapture_params {
  CUstream hStream;
  CUstreamCaptureMode mode;
  CUgraph hGraph;
  void* callbackFunc;
  void* userData;
};
constexpr CUpti_CallbackId recapture_cbid = CUPTI_DRIVER_TRACE_CBID_SIZE + 7; // as fake_cupti.cpp names it

std::string snapshot_dir;

void snapshot(const char* name) {
  const char* records = std::getenv("STREAMLIKE_CHECK_RECORDS");
  if (snapshot_dir.empty() || records == nullptr) return;
  std::ifstream from(std::string(records) + "/streamcheck-" + std::to_string(getpid()) + ".json", std::ios::binary);
  std::ofstream to(snapshot_dir + "/" + name, std::ios::binary);
  to << from.rdbuf();
}

// Kept out of line: its return address is the call site the checker reports, the same both times.
[[gnu::noinline]] int synchronize(int (*fire)(uint32_t, int, const void*, const CUresult*), CUstream stream,
                                  int (*last_verdict)()) {
  const cuStreamSynchronize_params sync{stream};
  const CUresult ok = CUDA_SUCCESS;
  fire(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, 0, &sync, nullptr);
  const int verdict = last_verdict();
  fire(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, 1, &sync, &ok);
  return verdict;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: cupti_client CHECKER FAKE_CUPTI [SNAPSHOT_DIR]\n");
    return 2;
  }
  if (argc > 3) snapshot_dir = argv[3];
  void* checker = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (checker == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  auto initialize = reinterpret_cast<int (*)()>(dlsym(checker, "InitializeInjection"));
  auto active = reinterpret_cast<int (*)()>(dlsym(checker, "streamlike_check_active"));
  auto last_verdict = reinterpret_cast<int (*)()>(dlsym(checker, "streamlike_check_last_verdict"));
  auto set_paused = reinterpret_cast<int (*)(int)>(dlsym(checker, "streamlike_check_set_paused"));
  if (initialize == nullptr || active == nullptr || last_verdict == nullptr || set_paused == nullptr) {
    std::fprintf(stderr, "%s lacks its entry points\n", argv[1]);
    return 2;
  }
  std::printf("initialized %d\n", initialize());
  std::printf("active %d\n", active());
  snapshot("at-start.json");
  void* cupti = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
  std::printf("cupti-loaded %d\n", cupti != nullptr ? 1 : 0);
  if (cupti == nullptr || active() != 1) return 0;
  auto subscription = reinterpret_cast<const char* (*)()>(dlsym(cupti, "fake_cupti_subscription"));
  auto enabled = reinterpret_cast<int (*)(uint32_t)>(dlsym(cupti, "fake_cupti_enabled"));
  auto fire = reinterpret_cast<int (*)(uint32_t, int, const void*, const CUresult*)>(dlsym(cupti, "fake_cupti_fire"));
  std::printf("subscription %s\n", subscription());
  std::printf("enabled-recapture %d\n", enabled(recapture_cbid));
  std::printf("enabled-newer %d\n", enabled(CUPTI_DRIVER_TRACE_CBID_SIZE + 9));
  std::printf("enabled-sync %d\n", enabled(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize));

  const auto stream = reinterpret_cast<CUstream>(0x5000);
  std::printf("verdict-before-capture %d\n", synchronize(fire, stream, last_verdict));
  const recapture_params begin{stream, CU_STREAM_CAPTURE_MODE_GLOBAL, reinterpret_cast<CUgraph>(0x6000), nullptr,
                               nullptr};
  const CUresult ok = CUDA_SUCCESS;
  fire(recapture_cbid, 0, &begin, nullptr);
  fire(recapture_cbid, 1, &begin, &ok);
  // The same call site twice: one report, then a repeat, which writes no record.
  for (const char* step : {"verdict-in-recapture", "verdict-repeat"}) {
    std::printf("%s %d\n", step, synchronize(fire, stream, last_verdict));
    snapshot(step == std::string("verdict-repeat") ? "at-repeat.json" : "at-report.json");
  }
  CUgraph graph = nullptr;
  const cuStreamEndCapture_params end{stream, &graph};
  fire(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, 0, &end, nullptr);
  fire(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, 1, &end, &ok);
  std::printf("verdict-after-capture %d\n", synchronize(fire, stream, last_verdict));

  // Paused, a sync is not subscribed to; idle, it is, and judged by nobody; resumed, judged again.
  // A capture's calls stay subscribed in every state.
  for (const auto& [name, state] : {std::pair{"paused", 1}, std::pair{"idle", 2}, std::pair{"resumed", 0}}) {
    const int switched = set_paused(state);
    std::printf("%s-switched %d\n", name, switched);
    std::printf("%s-enabled-sync %d\n", name, enabled(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize));
    std::printf("%s-enabled-recapture %d\n", name, enabled(recapture_cbid));
    std::printf("%s-verdict %d\n", name, synchronize(fire, stream, last_verdict));
  }
  std::printf("state-3 %d\n", set_paused(3));
  std::printf("state-minus-1 %d\n", set_paused(-1));
  std::fflush(stdout);
  return 0;
}
