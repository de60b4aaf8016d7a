// bench/cupti_floor_injection.cpp: libcupti_floor_injection.so, the floor under streamcheck's cost
// per checked call. Injected as the checker is (CUDA_INJECTION64_PATH, with STREAMLIKE_CHECK set),
// it subscribes to the same driver calls the checker subscribes to, with a callback that returns
// at once, and exports the checker's streamlike_check_set_paused, so bench/tools/
// streamcheck_overhead.py --library times it the same way: what CUPTI's callbacks cost alone, the
// part of the checker's cost no change to the checker can remove.
#include "../src/streamcheck/call_kind.hpp"

#include <cupti.h>

#include <mutex>
#include <vector>

namespace {

CUpti_SubscriberHandle subscriber = nullptr;
std::vector<CUpti_CallbackId> subscribed; // the checker's calls but the capture ones (what a pause switches)
std::mutex pausing;

void CUPTIAPI nothing(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

} // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (cuptiSubscribe(&subscriber, nothing, nullptr) != CUPTI_SUCCESS) return 1;
  for (CUpti_CallbackId cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    const auto kind = streamlike::check::classify(name);
    if (kind == streamlike::check::call_kind::other) continue;
    if (cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid) != CUPTI_SUCCESS) continue;
    if (!streamlike::check::follows_captures(kind)) subscribed.push_back(cbid);
  }
  return 1;
}

/// As the checker's: 1 pauses, 0 resumes, 2 subscribes as 0 does (this callback always returns at
/// once); how many calls were switched, -1 when not subscribed or for another state.
extern "C" __attribute__((visibility("default"))) int streamlike_check_set_paused(int state) {
  if (subscriber == nullptr || state < 0 || state > 2) return -1;
  const std::lock_guard lock(pausing);
  int switched = 0;
  for (const CUpti_CallbackId cbid : subscribed)
    if (cuptiEnableCallback(state == 1 ? 0 : 1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid) == CUPTI_SUCCESS)
      ++switched;
  return switched;
}
