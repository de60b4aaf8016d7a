// libkernel_library_torch.so: the library as torch custom operators (TORCH_LIBRARY), loaded with
// torch.ops.load_library. The operators pass no stream: the library launches on
// streamlike::current_stream(), which is torch's current stream (inside torch.cuda.stream(s): s;
// under torch.cuda.graph: the capturing stream), found through torch's provider.
//
//   torch.ops.kernel_library.scale_add_(a, x, y)   # y = a * x + y, in place
//   torch.ops.kernel_library.sum(x)                # a one-element tensor
#include "kernel_library.hpp"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdint>

namespace {

void check_input(const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.is_cuda(), name, ": expected a CUDA tensor, got one on ", t.device());
  TORCH_CHECK(t.scalar_type() == at::kFloat, name, ": expected float32, got ", t.scalar_type());
  TORCH_CHECK(t.is_contiguous(), name, ": expected a contiguous tensor");
}

void scale_add_(double a, const at::Tensor& x, const at::Tensor& y) {
  check_input(x, "x");
  check_input(y, "y");
  TORCH_CHECK(x.numel() == y.numel(), "scale_add_: expected tensors of one size, got ", x.numel(), " and ", y.numel());
  TORCH_CHECK(x.device() == y.device(), "scale_add_: x and y are on different devices");
  // current_stream() asks the current device: make the tensors' device current, as torch's own ops do.
  const c10::cuda::CUDAGuard device{y.device()};
  kernel_library::scale_add(static_cast<float>(a), x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
}

at::Tensor sum(const at::Tensor& x) {
  check_input(x, "x");
  const c10::cuda::CUDAGuard device{x.device()};
  at::Tensor out = at::empty({1}, x.options());
  kernel_library::sum(x.data_ptr<float>(), x.numel(), out.data_ptr<float>());
  return out;
}

} // namespace

TORCH_LIBRARY(kernel_library, m) {
  m.def("scale_add_(float a, Tensor x, Tensor(a!) y) -> ()");
  m.def("sum(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(kernel_library, CUDA, m) {
  m.impl("scale_add_", &scale_add_);
  m.impl("sum", &sum);
}
