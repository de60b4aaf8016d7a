// A stand-in for libcupti, for the CUPTI layer's tests on a CPU (cupti_loading.py): the functions
// libstreamlike_check.so looks up, names for a few driver callbacks (the recapture among them, past
// the toolkit headers' last callback id, as a newer CUPTI has it), and fake_cupti_fire, with which
// the test makes a driver call's callbacks come. FAKE_CUPTI chooses how subscribing goes:
//   v2 (unset): CUPTI 13.4, cuptiSubscribe_v2 takes the 13.2 struct (allowMultipleSubscribers);
//   13.0: CUPTI 13.0, cuptiSubscribe_v2 takes any struct and reads the 13.0 fields alone;
//   refuses-field: CUPTI 13.4 whose cuptiSubscribe_v2 refuses a struct larger than 13.0's;
//   v1: CUPTI 12.9, cuptiSubscribe_v2 refuses every struct, cuptiSubscribe subscribes;
//   busy: another subscriber holds CUPTI and cuptiSubscribe_v2 names it ("CUPTI for nsys");
//   busy-unnamed: the same, without the name.
#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string_view>

namespace {

// Laid out as CUPTI 13.4's CUpti_SubscriberParams (the 13.0 headers lack the last fields).
struct params_13_2 {
  std::size_t structSize;
  const char* subscriberName;
  char* oldSubscriberName;
  std::size_t oldSubscriberSize;
  std::uint8_t allowMultipleSubscribers;
  std::uint8_t padding[7];
};
constexpr std::size_t size_13_0 = offsetof(params_13_2, oldSubscriberSize) + sizeof(std::size_t);

CUpti_CallbackFunc subscribed_callback = nullptr;
void* subscribed_userdata = nullptr;
std::set<CUpti_CallbackId> enabled;
char how[128] = "none";

std::string_view mode() {
  const char* m = std::getenv("FAKE_CUPTI");
  return m == nullptr ? "v2" : m;
}

// A few driver calls by their real callback ids, and the recapture past the last one.
const char* name_of(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel: return "cuLaunchKernel";
    case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize: return "cuStreamSynchronize";
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2: return "cuStreamBeginCapture_v2";
    case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture: return "cuStreamEndCapture";
    case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2: return "cuMemAlloc_v2";
    default: break;
  }
  if (cbid == CUPTI_DRIVER_TRACE_CBID_SIZE + 7) return "cuStreamBeginRecaptureToGraph";
  if (cbid == CUPTI_DRIVER_TRACE_CBID_SIZE + 9) return "cuSomethingNewer"; // newer, unknown: left alone
  return nullptr;
}

} // namespace

extern "C" {

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) {
  subscribed_callback = callback;
  subscribed_userdata = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(0x51);
  std::strcpy(how, "cuptiSubscribe");
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata,
                                       CUpti_SubscriberParams* given) {
  auto* p = reinterpret_cast<params_13_2*>(given); // the header's struct may predate the last field
  const std::string_view m = mode();
  if (p == nullptr || p->structSize < size_13_0) return CUPTI_ERROR_INVALID_PARAMETER;
  if (m == "v1" || (m == "refuses-field" && p->structSize != size_13_0)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (m == "busy" || m == "busy-unnamed") {
    if (m == "busy" && p->oldSubscriberName != nullptr && p->oldSubscriberSize > 0) {
      std::strncpy(p->oldSubscriberName, "CUPTI for nsys", p->oldSubscriberSize - 1);
      p->oldSubscriberName[p->oldSubscriberSize - 1] = '\0';
    }
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  const bool multiple =
      m != "13.0" && p->structSize > offsetof(params_13_2, allowMultipleSubscribers) && p->allowMultipleSubscribers;
  std::snprintf(how, sizeof how, "cuptiSubscribe_v2 size %zu allowMultipleSubscribers %d name %s", p->structSize,
                multiple ? 1 : 0, p->subscriberName != nullptr ? p->subscriberName : "(none)");
  subscribed_callback = callback;
  subscribed_userdata = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(0x52);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  const std::string_view m = mode();
  *version = m == "13.0" ? 130001 : m == "v1" ? 120900 : 130400;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain domain,
                                         CUpti_CallbackId cbid) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || name_of(cbid) == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (enable != 0)
    enabled.insert(cbid);
  else
    enabled.erase(cbid);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || name_of(cbid) == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = name_of(cbid);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext, uint32_t* device) {
  *device = 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** text) {
  *text = result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
                                                                   : "CUPTI_ERROR_UNKNOWN";
  return CUPTI_SUCCESS;
}

/// How the checker subscribed ("none" before it did).
const char* fake_cupti_subscription(void) { return how; }

/// Whether the checker enabled the callback `cbid`.
int fake_cupti_enabled(uint32_t cbid) { return enabled.count(cbid) != 0 ? 1 : 0; }

/// A driver call's callback at `site` (entry or exit), as CUPTI makes it; 0 when the callback was
/// not enabled.
int fake_cupti_fire(uint32_t cbid, int exit_site, const void* params, const CUresult* result) {
  if (subscribed_callback == nullptr || enabled.count(cbid) == 0) return 0;
  CUpti_CallbackData data{};
  data.callbackSite = exit_site != 0 ? CUPTI_API_EXIT : CUPTI_API_ENTER;
  data.functionName = name_of(cbid);
  data.functionParams = params;
  data.functionReturnValue = const_cast<CUresult*>(result); // CUPTI hands the callback a non-const pointer
  data.context = reinterpret_cast<CUcontext>(0xc0);
  subscribed_callback(subscribed_userdata, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &data);
  return 1;
}

} // extern "C"
