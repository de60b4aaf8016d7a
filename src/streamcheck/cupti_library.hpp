// streamcheck: libcupti, found at run time. The checker links no libcupti (its headers only), so
// that it loads where CUPTI lives in a wheel (nvidia-cuda-cupti) as well as in a toolkit, and
// loads nothing in a process that never starts it. Every CUPTI function the CUPTI layer calls is
// one of these pointers (docs/streamcheck.md, "Where CUPTI is found").
#ifndef STREAMLIKE_SRC_STREAMCHECK_CUPTI_LIBRARY_HPP
#define STREAMLIKE_SRC_STREAMCHECK_CUPTI_LIBRARY_HPP

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace streamlike::check {

/// CUpti_SubscriberParams as CUPTI 13.2 and newer lay it out (13.4's cupti_callbacks.h): the 13.0
/// fields, then allowMultipleSubscribers and padding to 8 bytes. Declared here, since the toolkit
/// headers this is built with may predate the field; CUPTI reads only the fields that structSize
/// covers.
struct subscriber_params {
  std::size_t structSize;
  const char* subscriberName;
  char* oldSubscriberName;
  std::size_t oldSubscriberSize;
  std::uint8_t allowMultipleSubscribers;
  std::uint8_t padding[7];
};
/// Room for the name CUPTI writes of the subscriber that holds it: twice 13.0's
/// CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN (64), a macro that CUDA 12's CUPTI headers lack.
inline constexpr std::size_t old_subscriber_name_size = 128;
/// The 13.0 struct's size: what a CUPTI without allowMultipleSubscribers accepts.
inline constexpr std::size_t subscriber_params_size_13_0 =
    offsetof(subscriber_params, oldSubscriberSize) + sizeof(std::size_t);
/// 13.4's CUpti_SubscriberParams_STRUCT_SIZE (through the padding), and the size that ends at the
/// field.
inline constexpr std::size_t subscriber_params_size = sizeof(subscriber_params);
static_assert(subscriber_params_size == 40, "CUPTI 13.4's CUpti_SubscriberParams_STRUCT_SIZE");
inline constexpr std::size_t subscriber_params_size_to_field =
    offsetof(subscriber_params, allowMultipleSubscribers) + 1;
/// The first CUPTI that reads allowMultipleSubscribers (an older one may accept the larger struct
/// and ignore the field).
inline constexpr std::uint32_t cupti_version_multiple_subscribers = 130200;

struct cupti_functions {
  CUptiResult (*subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) = nullptr;
  /// Null where the CUPTI found has no cuptiSubscribe_v2 (before 13.0).
  CUptiResult (*subscribe_v2)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, subscriber_params*) = nullptr;
  CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId) = nullptr;
  CUptiResult (*get_callback_name)(CUpti_CallbackDomain, uint32_t, const char**) = nullptr;
  CUptiResult (*get_device_id)(CUcontext, uint32_t*) = nullptr;
  CUptiResult (*get_result_string)(CUptiResult, const char**) = nullptr;
  /// CUPTI's version (13.2 is 130200), 0 where it cannot say.
  std::uint32_t version = 0;
  std::string path; // the library the functions came from
};

/// Finds and opens libcupti, in this order: $STREAMLIKE_CHECK_CUPTI (a file); one already loaded in
/// the process (libcupti.so.13, .12, libcupti.so); $CUDA_HOME, $CUDA_PATH and /usr/local/cuda
/// (lib64/, extras/CUPTI/lib64/); the nvidia-cuda-cupti wheel's folder (nvidia/cu13/lib,
/// nvidia/cuda_cupti/lib) beside this library's own folder and in every site-packages folder the
/// process has a library mapped from; the loader's search path. Returns the functions, or null
/// with `why` set to one sentence naming every place looked at.
[[nodiscard]] const cupti_functions* load_cupti(std::string& why);

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_CUPTI_LIBRARY_HPP
