// The stand-ins of test/fake_frameworks (torch's C shim, tvm-ffi), loaded into the test process as
// the real frameworks load into a user's, and their own functions, as their users call them. For
// the tests of the current stream across frameworks; FAKE_TORCH and FAKE_TVM_FFI name the stand-ins'
// paths (the tests' meson.build passes them).
#ifndef STREAMLIKE_TEST_HOST_LOADED_FRAMEWORKS_HPP
#define STREAMLIKE_TEST_HOST_LOADED_FRAMEWORKS_HPP

#include "fake_cuda_streams.hpp"
#include "host_support.hpp"

#include <streamlike/current_stream_providers.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <dlfcn.h>

namespace host_test::loaded {

struct frameworks {
  std::int32_t (*torch_get)(std::int32_t device, void** stream) = nullptr;
  std::int32_t (*torch_set)(void* stream, std::int32_t device) = nullptr;
  void* (*tvm_get)(std::int32_t device_type, std::int32_t device) = nullptr;
  int (*tvm_set)(std::int32_t device_type, std::int32_t device, void* stream, void** original) = nullptr;

  frameworks() {
    fake_cuda_set_devices(host_test::fake_devices);
    void* torch = dlopen(FAKE_TORCH, RTLD_NOW | RTLD_GLOBAL);
    void* tvm = dlopen(FAKE_TVM_FFI, RTLD_NOW | RTLD_GLOBAL);
    if (torch == nullptr || tvm == nullptr) return;
    torch_get = reinterpret_cast<decltype(torch_get)>(dlsym(torch, "aoti_torch_get_current_cuda_stream"));
    torch_set = reinterpret_cast<decltype(torch_set)>(dlsym(torch, "torch_set_current_cuda_stream"));
    tvm_get = reinterpret_cast<decltype(tvm_get)>(dlsym(tvm, "TVMFFIEnvGetStream"));
    tvm_set = reinterpret_cast<decltype(tvm_set)>(dlsym(tvm, "TVMFFIEnvSetStream"));
  }
};

inline frameworks& fw() {
  static frameworks f;
  return f;
}

inline constexpr std::int32_t dl_cuda = 2; // kDLCUDA

inline void* torch_current(int device) {
  void* stream = host_test::fake_handle(0xbad);
  REQUIRE(fw().torch_get(device, &stream) == 0);
  return stream;
}
inline void set_torch(int device, void* stream) { REQUIRE(fw().torch_set(stream, device) == 0); }
inline void* tvm_current(int device) { return fw().tvm_get(dl_cuda, device); }
inline void set_tvm(int device, void* stream) { REQUIRE(fw().tvm_set(dl_cuda, device, stream, nullptr) == 0); }

/// Every framework back on its default stream (nothing set), on every device of this thread.
inline void reset_frameworks() {
  for (int device = 0; device < host_test::fake_devices; ++device) {
    set_torch(device, nullptr);
    set_tvm(device, nullptr);
  }
}

/// Both frameworks found, the fake CUDA in front, every framework on its default stream: the
/// precondition of every test that uses them.
inline void require_setup() {
  REQUIRE_MESSAGE(fake_cuda_present() == 1, "the fake CUDA is not what libstreamlike calls");
  REQUIRE_MESSAGE((fw().torch_get != nullptr && fw().tvm_get != nullptr),
                  "the stand-ins of test/fake_frameworks did not load");
  std::vector<std::string> names;
  for (const auto& p : streamlike::current_stream_providers()) names.push_back(p.name);
  REQUIRE(names == std::vector<std::string>{"torch", "tvm-ffi", "streamlike"});
  reset_frameworks();
}

} // namespace host_test::loaded

#endif // STREAMLIKE_TEST_HOST_LOADED_FRAMEWORKS_HPP
