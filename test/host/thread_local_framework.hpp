// A framework's current stream as the simplest provider keeps it: one handle per thread, any
// device. For the host tests of the current stream that need a framework beside streamlike's own
// scopes; each Tag is a framework of its own.
#ifndef STREAMLIKE_TEST_HOST_THREAD_LOCAL_FRAMEWORK_HPP
#define STREAMLIKE_TEST_HOST_THREAD_LOCAL_FRAMEWORK_HPP

#include <streamlike/c/current_stream_provider.h>

#include <cstdint>

template <class Tag>
struct thread_local_framework {
  static inline thread_local void* current = nullptr;
  static int get(void*, int32_t, void** stream) {
    *stream = current;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
  static int set(void*, int32_t, void* stream) {
    current = stream;
    return STREAMLIKE_CURRENT_STREAM_OK;
  }
};

#endif // STREAMLIKE_TEST_HOST_THREAD_LOCAL_FRAMEWORK_HPP
