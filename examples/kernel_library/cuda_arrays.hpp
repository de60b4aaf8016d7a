// cuda_arrays.hpp: a float32 CUDA array from any Python object that describes one, for the
// nanobind module: `__cuda_array_interface__` (torch, CuPy, numba-cuda, JAX), else DLPack
// (`__dlpack__(stream=-1)`: cuda.core and any other producer). Only the description is read: no
// copy, no synchronization with the producer (the operation runs on the caller's stream, which is
// the stream the caller produced the array on), so the module is capture-safe.
#ifndef KERNEL_LIBRARY_CUDA_ARRAYS_HPP
#define KERNEL_LIBRARY_CUDA_ARRAYS_HPP

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kernel_library::python {

namespace nb = nanobind;

/// A contiguous float32 array in CUDA device memory; `keep` holds what owns the memory.
struct cuda_float_array {
  float* data = nullptr;
  std::int64_t size = 0;
  nb::object keep;
};

namespace detail {

inline std::int64_t element_count(nb::handle shape) {
  std::int64_t count = 1;
  for (nb::handle extent : shape) count *= nb::cast<std::int64_t>(extent);
  return count;
}

inline bool c_contiguous(nb::handle shape, nb::handle strides, std::int64_t item) {
  if (strides.is_none()) return true;
  std::int64_t expected = item;
  const std::size_t rank = nb::len(shape);
  for (std::size_t k = rank; k-- > 0;) {
    const auto extent = nb::cast<std::int64_t>(shape[k]);
    if (extent != 1 && nb::cast<std::int64_t>(strides[k]) != expected) return false;
    expected *= extent;
  }
  return true;
}

[[noreturn]] inline void refuse(const char* name, const std::string& why) {
  throw std::invalid_argument(std::string(name) + ": " + why);
}

inline cuda_float_array from_cuda_array_interface(nb::handle object, nb::handle cai, const char* name, bool writable) {
  const nb::dict d = nb::cast<nb::dict>(cai);
  const std::string typestr = nb::cast<std::string>(d["typestr"]);
  if (typestr != "<f4") refuse(name, "expected float32 ('<f4'), got typestr '" + typestr + "'");
  const nb::handle shape = d["shape"];
  const nb::handle strides = d.contains("strides") ? nb::handle(d["strides"]) : nb::none();
  if (!c_contiguous(shape, strides, 4))
    refuse(name, "expected a C-contiguous array, got strides " + std::string(nb::repr(strides).c_str()));
  const nb::tuple data = nb::cast<nb::tuple>(d["data"]);
  if (writable && nb::cast<bool>(data[1])) refuse(name, "the array is read-only; expected a writable one");
  return {reinterpret_cast<float*>(nb::cast<std::uintptr_t>(data[0])), element_count(shape), nb::borrow(object)};
}

using dlpack_float = nb::ndarray<float, nb::device::cuda, nb::c_contig>;

inline cuda_float_array from_dlpack(nb::handle object, const char* name) {
  // Where the array lives first: a host array (numpy's) may refuse stream=-1 with its own words.
  constexpr int dl_cuda = 2;
  const nb::tuple device = nb::cast<nb::tuple>(object.attr("__dlpack_device__")());
  if (const int type = nb::cast<int>(device[0]); type != dl_cuda)
    refuse(name, "expected an array on a CUDA device, got DLPack device type " + std::to_string(type));
  // stream=-1: hand the array over without synchronizing (the consumer runs on the producer's stream).
  nb::object capsule = object.attr("__dlpack__")(nb::arg("stream") = -1);
  dlpack_float array;
  if (!nb::try_cast(capsule, array))
    refuse(name, "expected a C-contiguous float32 array on a CUDA device (read through DLPack)");
  return {array.data(), static_cast<std::int64_t>(array.size()), nb::cast(array)};
}

} // namespace detail

/// Reads `object` as a contiguous float32 CUDA array; std::invalid_argument (Python ValueError)
/// names the parameter and what was wrong.
inline cuda_float_array cuda_float_array_of(nb::handle object, const char* name, bool writable) {
  if (nb::hasattr(object, "__cuda_array_interface__"))
    return detail::from_cuda_array_interface(object, object.attr("__cuda_array_interface__"), name, writable);
  if (nb::hasattr(object, "__dlpack__")) return detail::from_dlpack(object, name);
  detail::refuse(name,
                 std::string("expected a CUDA array (an object with __cuda_array_interface__ or __dlpack__), got ") +
                     nb::type_name(object.type()).c_str());
}

} // namespace kernel_library::python

#endif // KERNEL_LIBRARY_CUDA_ARRAYS_HPP
