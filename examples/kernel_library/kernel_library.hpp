// kernel_library.hpp: a small kernel library written once against streamlike, the library that
// examples/kernel_library/ ships to PyTorch, CuPy, JAX and tvm-ffi (docs/kernel-library.md).
//
//   kernel_library::scale_add(a, x, y, n);          // y = a*x + y on the caller's current stream
//   kernel_library::scale_add(a, x, y, n, stream);  // ... on any stream_like stream
//   kernel_library::sum(x, n, out);                 // *out = x[0] + ... + x[n-1]
//
// Without a stream argument the work goes to streamlike::current_stream() of the current device:
// torch's inside torch.cuda.stream(s), tvm-ffi's inside its stream context, XLA's inside an FFI
// handler bound with streamlike/adapters/xla_ffi.hpp, a streamlike.use block's. Pointers are device
// pointers of the current device. Every function only queues work (no synchronization, no
// allocation, no stream query), so each may be recorded into a CUDA graph by stream capture. A
// failed launch throws streamlike::error naming the kernel.
#ifndef KERNEL_LIBRARY_HPP
#define KERNEL_LIBRARY_HPP

#include <streamlike/current_stream.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_view.hpp>

#include <cstdint>
#include <utility>

namespace kernel_library {

namespace detail {
// The compiled launchers (kernel_library.cu): one stream_view, whatever the caller had.
void launch_scale_add(float a, const float* x, float* y, std::int64_t n, streamlike::stream_view stream);
void launch_sum(const float* x, std::int64_t n, float* out, streamlike::stream_view stream);
} // namespace detail

/// y[i] = a * x[i] + y[i] for i < n, queued on `stream`.
template <class S>
  requires streamlike::stream_like<S>
void scale_add(float a, const float* x, float* y, std::int64_t n, S&& stream) {
  detail::launch_scale_add(a, x, y, n, streamlike::get_stream(std::forward<S>(stream)));
}
/// y[i] = a * x[i] + y[i] for i < n, queued on the caller's current stream.
inline void scale_add(float a, const float* x, float* y, std::int64_t n) {
  detail::launch_scale_add(a, x, y, n, streamlike::current_stream());
}

/// *out = x[0] + ... + x[n-1] (0 for n == 0), queued on `stream`.
template <class S>
  requires streamlike::stream_like<S>
void sum(const float* x, std::int64_t n, float* out, S&& stream) {
  detail::launch_sum(x, n, out, streamlike::get_stream(std::forward<S>(stream)));
}
/// *out = x[0] + ... + x[n-1], queued on the caller's current stream.
inline void sum(const float* x, std::int64_t n, float* out) {
  detail::launch_sum(x, n, out, streamlike::current_stream());
}

} // namespace kernel_library

#endif // KERNEL_LIBRARY_HPP
