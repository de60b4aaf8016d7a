// What one translation unit makes of the stream handle 0. default_stream_tu.cu is compiled twice
// into the default_stream test program: once in legacy mode (namespace legacy_tu) and once with
// nvcc --default-stream per-thread (namespace per_thread_tu), so both modes meet in one program.
#ifndef STREAMLIKE_TEST_GPU_DEFAULT_STREAM_TU_HPP
#define STREAMLIKE_TEST_GPU_DEFAULT_STREAM_TU_HPP

#include <cuda_runtime_api.h>

#define STREAMLIKE_TEST_DECLARE_TU(ns)                                                                \
  namespace ns {                                                                                      \
  /* streamlike::default_stream_is_per_thread, as this TU sees it. */                                 \
  bool default_stream_is_per_thread();                                                                \
  /* streamlike::resolve_default(stream_view{cudaStream_t{}}).get() */                                \
  cudaStream_t resolve_zero();                                                                        \
  /* streamlike::from_address(0).get() */                                                             \
  cudaStream_t from_address_zero();                                                                   \
  bool is_legacy_default_zero();     /* streamlike::is_legacy_default(stream_view{cudaStream_t{}}) */ \
  bool is_per_thread_default_zero(); /* streamlike::is_per_thread_default(...) */                     \
  /* The runtime's own reading of 0 in this TU: cudaStreamGetId(0, id). */                            \
  cudaError_t runtime_id_of_zero(unsigned long long* id);                                             \
  }

STREAMLIKE_TEST_DECLARE_TU(legacy_tu)
STREAMLIKE_TEST_DECLARE_TU(per_thread_tu)

#endif // STREAMLIKE_TEST_GPU_DEFAULT_STREAM_TU_HPP
