// streamlike/config.hpp: what the CUDA runtime and the CCCL in use provide.
//
// CCCL is feature-detected, never assumed: CUDA 13.0 ships CCCL 3.0 (<cuda/stream_ref> only);
// CCCL 3.1 adds <cuda/stream> with cuda::stream, cuda::get_stream and cuda::get_stream_t;
// CCCL 3.2 deprecates <cuda/stream_ref>, so <cuda/stream> is preferred wherever it exists.
#ifndef STREAMLIKE_CONFIG_HPP
#define STREAMLIKE_CONFIG_HPP

#include <cuda_runtime_api.h>

#if __has_include(<cuda/stream>)
#  include <cuda/stream>
#else
#  include <cuda/stream_ref>
#endif

// cuda::get_stream / cuda::get_stream_t (CCCL 3.1+).
#if defined(CCCL_VERSION) && CCCL_VERSION >= 3001000 && __has_include(<cuda/stream>)
#  define STREAMLIKE_HAS_CUDA_GET_STREAM 1
#else
#  define STREAMLIKE_HAS_CUDA_GET_STREAM 0
#endif

// The owning cuda::stream (CCCL 3.1+).
#define STREAMLIKE_HAS_CUDA_STREAM STREAMLIKE_HAS_CUDA_GET_STREAM

#define STREAMLIKE_VERSION_MAJOR 0
#define STREAMLIKE_VERSION_MINOR 1
#define STREAMLIKE_VERSION_PATCH 0

#endif // STREAMLIKE_CONFIG_HPP
