// streamcheck: the libraries that make streams of their own and order them themselves (NCCL,
// cuDNN, the CUDA math libraries, TensorRT, XLA): work on a stream one of them made is that
// library's business, not the caller's (docs/streamcheck.md, "The rule: order"). Pure.
#ifndef STREAMLIKE_SRC_STREAMCHECK_LIBRARY_STREAMS_HPP
#define STREAMLIKE_SRC_STREAMCHECK_LIBRARY_STREAMS_HPP

#include <array>
#include <string_view>

namespace streamlike::check {

/// Whether the shared object at `path` (the code that made a stream) is one of those libraries:
/// its file name begins with one of their names, or it lies in XLA's or JAX's folders.
[[nodiscard]] constexpr bool orders_its_own_streams(std::string_view path) noexcept {
  const auto slash = path.rfind('/');
  const std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
  constexpr std::array<std::string_view, 12> libraries{
      "libnccl",   "libcudnn",   "libcublas",   "libcufft",  "libcusparse", "libcusolver",
      "libcurand", "libnvinfer", "libcutensor", "libnvjpeg", "libcudss",    "libnvshmem",
  };
  for (std::string_view name : libraries)
    if (file.substr(0, name.size()) == name) return true;
  // jaxlib's extension and the CUDA plugins: XLA's streams.
  constexpr std::array<std::string_view, 3> folders{"/jaxlib/", "/jax_cuda", "/jax_plugins/"};
  for (std::string_view folder : folders)
    if (path.find(folder) != std::string_view::npos) return true;
  return file.substr(0, 13) == "xla_extension" || file.substr(0, 14) == "libjax_common";
}

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_LIBRARY_STREAMS_HPP
