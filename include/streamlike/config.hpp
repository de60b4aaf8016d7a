// streamlike/config.hpp: what the CUDA runtime and the CCCL in use provide.
//
// CCCL is feature-detected, never assumed: CUDA 13.0 ships CCCL 3.0 (<cuda/stream_ref> only);
// CCCL 3.1 adds <cuda/stream> with cuda::stream, cuda::get_stream and cuda::get_stream_t;
// CCCL 3.2 deprecates <cuda/stream_ref>, so <cuda/stream> is preferred wherever it exists.
#ifndef STREAMLIKE_CONFIG_HPP
#define STREAMLIKE_CONFIG_HPP

// C++20 first: below it the headers fail on `requires` and concepts with messages that never say
// what is wrong. nvcc defaults to C++17 and CMake 3.25 drops `cuda_std_20` for nvcc 13, so this is
// where a .cu file compiled without -std=c++20 lands. MSVC keeps __cplusplus at 199711L unless
// /Zc:__cplusplus and reports the standard in _MSVC_LANG. After the #error, the missing include
// ends the compilation (a fatal error), so the line above is the only one printed.
#if (defined(_MSVC_LANG) ? _MSVC_LANG : __cplusplus) < 202002L
#  error "streamlike needs C++20: add -std=c++20 (nvcc and g++/clang++; MSVC: /std:c++20)"
#  include <streamlike/stopped_here_compile_as_cxx20> // NOLINT: never exists, stops the compilation
#endif

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
