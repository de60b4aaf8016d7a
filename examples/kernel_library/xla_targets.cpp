// libkernel_library_xla.so: the library as XLA FFI targets, for jax.ffi.ffi_call under jax.jit
// (kernel_library.py registers them). Each handler is bound with the streamlike bridge
// (streamlike/adapters/xla_ffi.hpp): XLA's stream is the current stream while the body runs, so
// the library's calls without a stream argument launch there, and every framework's current stream
// is put back after. Every body only queues work, so each declares XLA's command-buffer trait.
#include "kernel_library.hpp"
#include "probe.hpp"

#include <streamlike/adapters/xla_ffi.hpp>
#include <streamlike/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ffi = xla::ffi;
namespace bridge = streamlike::adapters::xla_ffi;

namespace {

void require_same_size(std::size_t a, std::size_t b, const char* what) {
  if (a != b)
    throw std::invalid_argument(std::string(what) + ": expected arrays of one size, got " + std::to_string(a) +
                                " and " + std::to_string(b) + " elements");
}

// out = a * x + y. With input_output_aliases={1: 0} out is y's buffer and nothing is copied.
void scale_add(ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> y, ffi::ResultBuffer<ffi::F32> out, float a) {
  require_same_size(x.element_count(), y.element_count(), "kernel_library_scale_add");
  require_same_size(y.element_count(), out->element_count(), "kernel_library_scale_add");
  float* result = out->typed_data();
  if (result != y.typed_data()) {
    const cudaError_t copied = cudaMemcpyAsync(result, y.typed_data(), y.size_bytes(), cudaMemcpyDeviceToDevice,
                                               streamlike::current_stream().get());
    if (copied != cudaSuccess) throw streamlike::error(copied, "cudaMemcpyAsync (kernel_library_scale_add)");
  }
  kernel_library::scale_add(a, x.typed_data(), result, static_cast<std::int64_t>(x.element_count()));
}

void sum(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> out) {
  if (out->element_count() < 1) throw std::invalid_argument("kernel_library_sum: expected a result of one element");
  kernel_library::sum(x.typed_data(), static_cast<std::int64_t>(x.element_count()), out->typed_data());
}

// The probes (probe.hpp): t = x once the gate at `gate` opens; out[0] = whether XLA's stream was
// capturing (recording a command buffer) when the handler ran.
void gated_copy(streamlike::stream_view stream, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> t,
                std::uint64_t gate, std::uint64_t timeout_ns) {
  require_same_size(x.element_count(), t->element_count(), "kernel_library_gated_copy");
  kernel_library::probe::gated_copy(gate, x.typed_data(), t->typed_data(), static_cast<std::int64_t>(x.element_count()),
                                    timeout_ns, stream);
}

void capturing(streamlike::stream_view stream, ffi::ResultBuffer<ffi::S32> out) {
  kernel_library::probe::write_capturing(out->typed_data(), stream);
}

} // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    kernel_library_scale_add, bridge::on_xla_stream(scale_add),
    bridge::bind().Arg<ffi::Buffer<ffi::F32>>().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>().Attr<float>(
        "a"),
    {bridge::command_buffer_compatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(kernel_library_sum, bridge::on_xla_stream(sum),
                              bridge::bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>(),
                              {bridge::command_buffer_compatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(kernel_library_gated_copy, bridge::on_xla_stream(gated_copy),
                              bridge::bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<std::uint64_t>("gate")
                                  .Attr<std::uint64_t>("timeout_ns"),
                              {bridge::command_buffer_compatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(kernel_library_capturing, bridge::on_xla_stream(capturing),
                              bridge::bind().Ret<ffi::Buffer<ffi::S32>>(), {bridge::command_buffer_compatible});
