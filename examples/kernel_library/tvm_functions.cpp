// libkernel_library_tvm.so: the library as tvm-ffi functions, loaded with tvm_ffi.load_module. The
// functions pass no stream: the library launches on streamlike::current_stream(), which is
// tvm-ffi's environment stream (tvm_ffi.use_raw_stream, use_torch_stream) where the caller set one,
// found through tvm-ffi's provider (torch's, where torch names a stream and tvm-ffi does not).
//
//   mod.scale_add(a, x, y)    # y = a * x + y, in place (any DLPack arrays: torch, CuPy, ...)
//   mod.sum(x, out)           # out[0] = sum of x
#include "kernel_library.hpp"

#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kernel_library_tvm {
namespace {

/// The array's data after checking it is a contiguous float32 array on a CUDA device.
float* float_data(const tvm::ffi::TensorView& t, const char* name) {
  if (t.device().device_type != kDLCUDA)
    TVM_FFI_THROW(ValueError) << name << ": expected an array on a CUDA device, got device type "
                              << static_cast<int>(t.device().device_type);
  if (t.dtype().code != kDLFloat || t.dtype().bits != 32 || t.dtype().lanes != 1)
    TVM_FFI_THROW(TypeError) << name << ": expected float32";
  if (!t.IsContiguous()) TVM_FFI_THROW(ValueError) << name << ": expected a contiguous array";
  return static_cast<float*>(t.data_ptr());
}

/// Makes the array's device current (current_stream() asks the current device), and puts back
/// the one that was current.
class device_scope {
public:
  explicit device_scope(int device) {
    (void)cudaGetDevice(&before_);
    if (device != before_) (void)cudaSetDevice(device);
  }
  ~device_scope() { (void)cudaSetDevice(before_); }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

private:
  int before_ = 0;
};

} // namespace

void scale_add(double a, tvm::ffi::TensorView x, tvm::ffi::TensorView y) {
  const float* xs = float_data(x, "x");
  float* ys = float_data(y, "y");
  if (x.numel() != y.numel())
    TVM_FFI_THROW(ValueError) << "scale_add: expected arrays of one size, got " << x.numel() << " and " << y.numel();
  const device_scope device{y.device().device_id};
  kernel_library::scale_add(static_cast<float>(a), xs, ys, x.numel());
}

void sum(tvm::ffi::TensorView x, tvm::ffi::TensorView out) {
  const float* xs = float_data(x, "x");
  float* outs = float_data(out, "out");
  if (out.numel() < 1) TVM_FFI_THROW(ValueError) << "out: expected at least one element";
  const device_scope device{x.device().device_id};
  kernel_library::sum(xs, x.numel(), outs);
}

} // namespace kernel_library_tvm

TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_add, kernel_library_tvm::scale_add);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum, kernel_library_tvm::sum);
