"""The kernel library's Python front: each framework's face, loaded on demand.

    import kernel_library
    nb = kernel_library.nanobind_module()      # torch, CuPy, numba-cuda, cuda.core, JAX arrays
    ops = kernel_library.torch_ops()           # torch.ops.kernel_library
    jx = kernel_library.jax_functions()        # jax.ffi.ffi_call wrappers, usable under jax.jit
    tvm = kernel_library.tvm_ffi_module()      # tvm_ffi.load_module(...)

Every face launches on its caller's current stream. The compiled parts are looked for in
$KERNEL_LIBRARY_DIR (the build folder meson puts them in), else next to this file. A face that
was not built raises ImportError saying which file is missing.
"""

import ctypes
import functools
import os
from pathlib import Path

LIBRARY_DIR = Path(os.environ.get("KERNEL_LIBRARY_DIR", Path(__file__).resolve().parent))


def _library(name):
    path = LIBRARY_DIR / name
    if not path.is_file():
        raise ImportError(f"{name} is not in {LIBRARY_DIR}: that face of the kernel library was not built")
    return path


@functools.cache
def nanobind_module():
    """The nanobind module: scale_add(a, x, y, stream=None), sum(x, out, stream=None)."""
    try:
        import streamlike  # noqa: F401  (first, so that the module links the package's current stream)
    except ImportError:
        pass
    import kernel_library_nb

    return kernel_library_nb


@functools.cache
def torch_ops():
    """torch.ops.kernel_library: scale_add_(a, x, y) and sum(x), on torch's current stream."""
    import torch

    torch.ops.load_library(str(_library("libkernel_library_torch.so")))
    return torch.ops.kernel_library


@functools.cache
def tvm_ffi_module():
    """The tvm-ffi module: scale_add(a, x, y) and sum(x, out), on tvm-ffi's (or torch's) stream."""
    import tvm_ffi

    return tvm_ffi.load_module(str(_library("libkernel_library_tvm.so")))


class JaxFunctions:
    """The XLA FFI targets, registered once with jax.ffi; each method is an ffi_call (jit-able)."""

    TARGETS = ("scale_add", "sum", "gated_copy", "capturing")

    def __init__(self):
        import jax
        import numpy

        self._jax = jax
        self._numpy = numpy
        library = ctypes.cdll.LoadLibrary(str(_library("libkernel_library_xla.so")))
        for name in self.TARGETS:
            handler = getattr(library, f"kernel_library_{name}")
            jax.ffi.register_ffi_target(f"kernel_library_{name}", jax.ffi.pycapsule(handler), platform="CUDA")

    def scale_add(self, a, x, y):
        """a * x + y, in y's buffer where XLA can donate it."""
        out = self._jax.ShapeDtypeStruct(y.shape, y.dtype)
        call = self._jax.ffi.ffi_call("kernel_library_scale_add", out, input_output_aliases={1: 0})
        return call(x, y, a=self._numpy.float32(a))

    def sum(self, x):
        out = self._jax.ShapeDtypeStruct((1,), x.dtype)
        return self._jax.ffi.ffi_call("kernel_library_sum", out)(x)

    def gated_copy(self, gate_address, x, timeout_ns):
        """x, once the probe's gate opens (the tests' ordering probe)."""
        out = self._jax.ShapeDtypeStruct(x.shape, x.dtype)
        call = self._jax.ffi.ffi_call("kernel_library_gated_copy", out)
        return call(x, gate=self._numpy.uint64(gate_address), timeout_ns=self._numpy.uint64(timeout_ns))

    def capturing(self):
        """[1] where XLA's stream was capturing (recording a command buffer) when it ran, else [0]."""
        out = self._jax.ShapeDtypeStruct((1,), self._numpy.int32)
        return self._jax.ffi.ffi_call("kernel_library_capturing", out)()


@functools.cache
def jax_functions():
    return JaxFunctions()
