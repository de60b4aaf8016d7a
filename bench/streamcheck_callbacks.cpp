// bench/streamcheck_callbacks.cpp: the checker's CUPTI callbacks on a CPU, for counting the
// instructions they execute per clean checked launch (bench/tools/checker_instructions.py runs it
// under callgrind). It loads libstreamlike_check.so and the fake libcupti of
// test/streamcheck/fake_cupti.cpp as the driver would (InitializeInjection), then makes the
// callbacks CUPTI makes for LAUNCHES cuLaunchKernel calls (entry and exit) on one stream, in the
// shape of bench/streamcheck_launches.cu: this program's streamlike (libstreamlike.so, whose
// registry the checker's copy forwards to) holds a scope on that stream (on_current), or holds
// none (nothing_current). Every launch must be found clean, or it exits 1.
//
// Run with the fake CUDA (test/fake_cuda) preloaded and a folder on LD_LIBRARY_PATH whose
// libcuda.so.1 is the fake too (the checker opens the driver by that name).
//
// usage: streamcheck_callbacks CHECKER FAKE_CUPTI on_current|nothing_current LAUNCHES
#include <streamlike/current_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include <cupti.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

namespace {

using fire_fn = int (*)(uint32_t cbid, int exit_site, const void* params, const CUresult* result);
using verdict_fn = int (*)();

// The callbacks of one launch; out of line, so that a profile names where the checked launches are.
[[gnu::noinline]] bool launch(fire_fn fire, verdict_fn last_verdict, const cuLaunchKernel_params& params) {
  static const CUresult ok = CUDA_SUCCESS;
  if (fire(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 0, &params, nullptr) != 1) return false;
  const int verdict = last_verdict(); // 0: fine
  (void)fire(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1, &params, &ok);
  return verdict == 0;
}

void* open(const char* path, int how) {
  void* handle = dlopen(path, how);
  if (handle == nullptr) {
    std::fprintf(stderr, "streamcheck_callbacks: cannot load %s: %s\n", path, dlerror());
    std::exit(2);
  }
  return handle;
}

template <class F>
F find(void* library, const char* name) {
  auto* f = reinterpret_cast<F>(dlsym(library, name));
  if (f == nullptr) {
    std::fprintf(stderr, "streamcheck_callbacks: no %s in the library loaded\n", name);
    std::exit(2);
  }
  return f;
}

} // namespace

int main(int argc, char** argv) {
  const std::string_view row = argc == 5 ? argv[3] : "";
  const long launches = argc == 5 ? std::strtol(argv[4], nullptr, 10) : 0;
  if ((row != "on_current" && row != "nothing_current") || launches <= 0) {
    std::fprintf(stderr, "usage: streamcheck_callbacks CHECKER FAKE_CUPTI on_current|nothing_current LAUNCHES\n");
    return 2;
  }
  // Checked as streamlike.check runs it, with the fake libcupti named where the checker looks first.
  setenv("STREAMLIKE_CHECK", "all", 1);
  setenv("STREAMLIKE_CHECK_CUPTI", argv[2], 1);
  void* checker = open(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (find<int (*)()>(checker, "InitializeInjection")() != 1 ||
      find<int (*)()>(checker, "streamlike_check_active")() != 1) {
    std::fprintf(stderr, "streamcheck_callbacks: the checker did not start (its message is above)\n");
    return 1;
  }
  void* cupti = open(argv[2], RTLD_NOW | RTLD_NOLOAD); // the checker loaded it
  const auto fire = find<fire_fn>(cupti, "fake_cupti_fire");
  const auto last_verdict = find<verdict_fn>(checker, "streamlike_check_last_verdict");

  const auto stream = streamlike::unique_stream::create(); // the fake CUDA's
  std::unique_ptr<streamlike::scoped_current_stream> current;
  if (row == "on_current") current = std::make_unique<streamlike::scoped_current_stream>(stream);
  cuLaunchKernel_params params{};
  params.hStream = reinterpret_cast<CUstream>(stream.get());
  for (long i = 0; i < launches; ++i) {
    if (!launch(fire, last_verdict, params)) {
      std::fprintf(stderr, "streamcheck_callbacks: launch %ld was not found clean (or its callback is off)\n", i);
      return 1;
    }
  }
  std::printf("streamcheck_callbacks: %ld clean checked launches (%s)\n", launches, row.data());
  return 0;
}
