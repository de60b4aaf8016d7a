// The checker beside a second CUPTI subscriber (suite gpu; exits 77 without a device): the program
// runs itself again with the checker injected (CUDA_INJECTION64_PATH, STREAMLIKE_CHECK=wrong-stream,
// STREAMLIKE_CHECK_RECORDS), then subscribes to the same CUPTI itself, as a profiler would, with
// cuptiSubscribe_v2 and allowMultipleSubscribers, and launches on the legacy stream inside a
// non-blocking current stream. Where CUPTI is 13.2 or newer both must see the launch: its own
// callback counts it and the checker reports it. An older CUPTI allows one subscriber: the program
// checks that the refusal names the checker, then skips. Which CUPTI: the checker's search
// (docs/streamcheck.md, "Where CUPTI is found"), e.g. STREAMLIKE_CHECK_CUPTI=.../libcupti.so.13 of
// the nvidia-cuda-cupti wheel.
//
// usage: two_subscribers LIBRARY   (LIBRARY: libstreamlike_check.so)
#include "../../src/streamcheck/cupti_library.hpp"
#include "../gpu/device_presence.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <cuda.h>
#include <cupti.h>

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

namespace {

__global__ void touch(int* p) { *p += 1; }

// CUpti_SubscriberParams as CUPTI 13.4 lays it out: the checker's own declaration.
using streamlike::check::subscriber_params;

std::atomic<int> launches_seen{0};

void CUPTIAPI count_launches(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cb->callbackSite == CUPTI_API_ENTER) ++launches_seen;
}

int fail(const char* what) {
  std::fprintf(stderr, "two_subscribers: FAIL: %s\n", what);
  return 1;
}

template <class F>
F look_up(void* library, const char* name) {
  return library != nullptr ? reinterpret_cast<F>(dlsym(library, name)) : nullptr;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: two_subscribers LIBRARY  (LIBRARY: libstreamlike_check.so)\n");
    return 2;
  }
  char library[PATH_MAX];
  if (realpath(argv[1], library) == nullptr) {
    std::fprintf(stderr, "two_subscribers: no checker library at %s (%s): skipping (exit %d)\n", argv[1],
                 std::strerror(errno), gpu_test::skip_exit_code);
    return gpu_test::skip_exit_code;
  }
  const char* checked = std::getenv("STREAMLIKE_TWO_SUBSCRIBERS_CHECKED");
  if (checked == nullptr || std::strcmp(checked, "1") != 0) {
    char records[] = "/tmp/two_subscribers.XXXXXX";
    if (mkdtemp(records) == nullptr) return fail("cannot make a folder for the records");
    setenv("CUDA_INJECTION64_PATH", library, 1);
    setenv("STREAMLIKE_CHECK", "wrong-stream", 1);
    setenv("STREAMLIKE_CHECK_RECORDS", records, 1);
    setenv("STREAMLIKE_TWO_SUBSCRIBERS_CHECKED", "1", 1);
    unsetenv("STREAMLIKE_CHECK_FAIL");
    unsetenv("STREAMLIKE_CHECK_ALLOW");
    execv("/proc/self/exe", argv);
    return fail("cannot run itself again under the checker");
  }

  int devices = 0;
  if (const int code = gpu_test::check_devices("two_subscribers", 1, devices); code >= 0) return code;
  if (cudaSetDevice(0) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) return fail("cannot initialize device 0");
  void* checker = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  auto active = look_up<int (*)()>(checker, "streamlike_check_active");
  auto last_verdict = look_up<int (*)()>(checker, "streamlike_check_last_verdict");
  // The CUPTI the checker opened (one per process).
  void* cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
  auto get_version = look_up<CUptiResult (*)(uint32_t*)>(cupti, "cuptiGetVersion");
  if (active == nullptr || last_verdict == nullptr || active() != 1) {
    // A CUPTI newer than the driver may not start (the nvidia-cuda-cupti wheel on an older driver).
    uint32_t version = 0;
    int driver_version = 0;
    if (get_version != nullptr && get_version(&version) == CUPTI_SUCCESS &&
        cudaDriverGetVersion(&driver_version) == cudaSuccess && driver_version < static_cast<int>(version / 10)) {
      std::printf("two_subscribers: CUPTI %u is newer than the driver (CUDA %d) and the checker could not start "
                  "with it (its stderr says why): skipping (exit %d)\n",
                  version, driver_version, gpu_test::skip_exit_code);
      return gpu_test::skip_exit_code;
    }
    return fail("the checker is not running in this process (its stderr says why)");
  }
  auto subscribe_v2 = look_up<CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, subscriber_params*)>(
      cupti, "cuptiSubscribe_v2");
  auto enable = look_up<CUptiResult (*)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId)>(
      cupti, "cuptiEnableCallback");
  uint32_t version = 0;
  if (get_version == nullptr || subscribe_v2 == nullptr || enable == nullptr || get_version(&version) != CUPTI_SUCCESS)
    return fail("no libcupti.so.13 with cuptiGetVersion, cuptiSubscribe_v2 and cuptiEnableCallback in the process");
  std::printf("two_subscribers: CUPTI %u\n", version);

  char old_name[streamlike::check::old_subscriber_name_size] = {};
  subscriber_params p{};
  p.structSize = streamlike::check::subscriber_params_size; // 13.4's CUpti_SubscriberParams_STRUCT_SIZE
  p.subscriberName = "two_subscribers test";
  p.oldSubscriberName = old_name;
  p.oldSubscriberSize = sizeof old_name;
  p.allowMultipleSubscribers = 1;
  CUpti_SubscriberHandle second = nullptr;
  const CUptiResult subscribed = subscribe_v2(&second, count_launches, nullptr, &p);
  if (version < 130200) {
    // Before 13.2 the second subscriber is refused: as held (MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), or,
    // by 13.0, for the size of 13.4's parameters (INVALID_PARAMETER). Taking it would be the bug.
    if (subscribed != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && subscribed != CUPTI_ERROR_INVALID_PARAMETER) {
      std::fprintf(stderr, "two_subscribers: cuptiSubscribe_v2 returned %d\n", static_cast<int>(subscribed));
      return fail("a CUPTI before 13.2 took a second subscriber, or refused it for another reason");
    }
    std::printf("two_subscribers: CUPTI %u allows one subscriber (cuptiSubscribe_v2 returned %d); the checker holds "
                "it (%s). Skipping (exit %d): run with STREAMLIKE_CHECK_CUPTI naming a libcupti of 13.2 or newer\n",
                version, static_cast<int>(subscribed), old_name[0] != '\0' ? old_name : "unnamed",
                gpu_test::skip_exit_code);
    return gpu_test::skip_exit_code;
  }
  if (subscribed != CUPTI_SUCCESS) {
    std::fprintf(stderr, "two_subscribers: cuptiSubscribe_v2 returned %d (held by: %s)\n", static_cast<int>(subscribed),
                 old_name);
    return fail("CUPTI 13.2 or newer refused a second subscriber beside the checker");
  }
  for (const CUpti_CallbackId cbid :
       {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz})
    if (enable(1, second, CUPTI_CB_DOMAIN_DRIVER_API, cbid) != CUPTI_SUCCESS)
      return fail("cannot enable cuLaunchKernel");

  // A legacy-stream launch inside a non-blocking current stream: a wrong stream.
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto launch = look_up<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     CUstream, void**, void**)>(driver, "cuLaunchKernel");
  cudaFunction_t function = nullptr;
  int* counter = nullptr;
  cudaStream_t side = nullptr;
  if (launch == nullptr || cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(touch)) != cudaSuccess ||
      cudaMalloc(&counter, sizeof(int)) != cudaSuccess || cudaMemset(counter, 0, sizeof(int)) != cudaSuccess ||
      cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
    return fail("cannot set up the kernel, its buffer and a non-blocking stream");
  (void)last_verdict();
  const int seen_before = launches_seen.load();
  int verdict = -1;
  {
    const streamlike::scoped_current_stream scope(streamlike::stream_view{side});
    void* args[] = {&counter};
    if (launch(reinterpret_cast<CUfunction>(function), 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr) != CUDA_SUCCESS)
      return fail("cuLaunchKernel failed");
    verdict = last_verdict();
  }
  int value = 0;
  if (cudaMemcpy(&value, counter, sizeof value, cudaMemcpyDeviceToHost) != cudaSuccess || value != 1)
    return fail("the kernel did not run once");
  const int seen = launches_seen.load() - seen_before;
  std::printf("two_subscribers: the second subscriber saw %d launch(es); the checker's verdict %d (1: reported)\n",
              seen, verdict);
  if (seen != 1) return fail("the second subscriber did not see the launch once");
  if (verdict != 1) return fail("the checker did not report the legacy-stream launch beside the second subscriber");

  // The record the checker wrote when it started.
  const std::string record_path = std::string(std::getenv("STREAMLIKE_CHECK_RECORDS")) + "/streamcheck-" +
                                  std::to_string(static_cast<long>(getpid())) + ".json";
  std::ifstream record_file(record_path);
  const std::string record((std::istreambuf_iterator<char>(record_file)), std::istreambuf_iterator<char>());
  if (record.find("\"schema\": \"streamlike.check.process/1\"") == std::string::npos ||
      record.find("\"checked\": true") == std::string::npos || record.find("\"wrong_stream\": 1") == std::string::npos)
    return fail(("the record " + record_path + " does not say checked with one wrong-stream site: " + record).c_str());
  std::printf("two_subscribers: PASS: both subscribers saw the launch; record %s\n", record_path.c_str());
  return 0;
}
