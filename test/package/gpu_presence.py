"""Whether a GPU can be used, asked of the driver directly (before the package is built or
imported), for the GPU test modules to skip themselves with the reason when it cannot."""

import ctypes

import pytest


def driver_problem():
    """Why no GPU can be used, or None."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return f"no CUDA driver ({e})"
    if cuda.cuInit(0) != 0:
        return "the CUDA driver has no usable device (cuInit failed)"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return "no CUDA device"
    return None


def skip_module_without_gpu():
    """Skips the calling test module, saying why, where no GPU can be used."""
    problem = driver_problem()
    if problem is not None:
        pytest.skip(problem, allow_module_level=True)
