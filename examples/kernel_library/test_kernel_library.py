"""The kernel library's faces without a GPU: what meson built is there and loads, and bad input
is refused by name before any CUDA call. The GPU behaviour is gpu_kernel_library.py's."""

import ctypes
import os

import kernel_library
import pytest

BUILT = [f for f in os.environ.get("KERNEL_LIBRARY_FACES", "nanobind").split(",") if f]
FILES = {
    "torch": "libkernel_library_torch.so",
    "xla": "libkernel_library_xla.so",
    "tvm_ffi": "libkernel_library_tvm.so",
}


def test_the_nanobind_module_loads_and_names_its_stream_parameter():
    nb = kernel_library.nanobind_module()
    assert nb.scale_add.__doc__ is not None and "stream" in nb.scale_add.__doc__
    assert "streamlike.CudaStreamLike | None" in nb.sum.__doc__


@pytest.mark.parametrize("face", sorted(FILES))
def test_each_face_built_is_where_the_front_looks(face):
    if face not in BUILT:
        why = [w for w in os.environ.get("KERNEL_LIBRARY_MISSING", "").split(";") if w.startswith(face)]
        pytest.skip(why[0] if why else f"{face} was not built")
    assert (kernel_library.LIBRARY_DIR / FILES[face]).is_file()


# What each compiled face must export for its framework's loader (read with ctypes: no framework).
EXPORTS = {
    "xla": [f"kernel_library_{name}" for name in kernel_library.JaxFunctions.TARGETS],
    "tvm_ffi": ["__tvm_ffi_scale_add", "__tvm_ffi_sum"],
}


@pytest.mark.parametrize("face", sorted(EXPORTS))
def test_each_face_exports_what_its_framework_loads(face):
    if face not in BUILT:
        pytest.skip(f"{face} was not built")
    library = ctypes.CDLL(str(kernel_library.LIBRARY_DIR / FILES[face]))
    for symbol in EXPORTS[face]:
        assert hasattr(library, symbol), f"{FILES[face]} does not export {symbol}"


class HostArray:
    """A host array that speaks DLPack (numpy's rules): its device type is the CPU's."""

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, stream=None):
        raise AssertionError("the module must refuse a host array before asking for its data")


def cai(typestr="<f4", shape=(4,), strides=None, readonly=False, pointer=0x1000):
    class Described:
        __cuda_array_interface__ = {
            "version": 3,
            "typestr": typestr,
            "shape": shape,
            "strides": strides,
            "data": (pointer, readonly),
        }

    return Described()


class Stream:
    """A stream given explicitly (only __cuda_stream__): the current stream, which needs a CUDA
    driver to read, is never asked."""

    def __cuda_stream__(self):
        return (0, 0x5000)


S = Stream()

BAD_INPUTS = [
    ("not an array", lambda nb: nb.scale_add(1.0, object(), cai(), S), "x: expected a CUDA array"),
    ("a host array", lambda nb: nb.scale_add(1.0, HostArray(), cai(), S), "x: expected an array on a CUDA device"),
    ("float64", lambda nb: nb.scale_add(1.0, cai("<f8"), cai(), S), "x: expected float32 ('<f4'), got typestr '<f8'"),
    ("strided", lambda nb: nb.scale_add(1.0, cai(strides=(8,)), cai(), S), "x: expected a C-contiguous array"),
    ("read-only y", lambda nb: nb.scale_add(1.0, cai(), cai(readonly=True), S), "y: the array is read-only"),
    ("sizes differ", lambda nb: nb.scale_add(1.0, cai(shape=(3,)), cai(), S), "got 3 and 4 elements"),
    ("empty out", lambda nb: nb.sum(cai(), cai(shape=(0,)), S), "out: expected at least one element"),
    ("an int stream", lambda nb: nb.scale_add(1.0, cai(), cai(), 7), None),
]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_is_refused_by_name(case):
    _, call, message = case
    nb = kernel_library.nanobind_module()
    if message is None:  # the casters' own refusal: an int names no stream without a convention
        with pytest.raises(TypeError):
            call(nb)
        return
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(nb)


def test_the_jax_functions_lower_to_the_xla_targets_with_their_attributes():
    """Registration and lowering need no GPU: each function becomes a custom call of its target,
    with its attributes typed as the handlers bind them, and scale_add writes into y's buffer."""
    if "xla" not in BUILT:
        pytest.skip("the XLA FFI targets were not built")
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    fns = kernel_library.jax_functions()

    def probe(x, y):
        t = fns.gated_copy(0x1234, x, 5_000)
        return fns.scale_add(3.0, t, y), fns.sum(t), fns.capturing()

    x = jnp.ones(16, jnp.float32)
    calls = [line for line in jax.jit(probe).lower(x, x).as_text().splitlines() if "custom_call @" in line]
    by_target = {line.split("custom_call @")[1].split("(")[0]: line for line in calls}
    assert sorted(by_target) == sorted(f"kernel_library_{name}" for name in kernel_library.JaxFunctions.TARGETS)
    assert "gate = 4660 : ui64" in by_target["kernel_library_gated_copy"]
    assert "timeout_ns = 5000 : ui64" in by_target["kernel_library_gated_copy"]
    assert "a = 3.000000e+00 : f32" in by_target["kernel_library_scale_add"]
    assert "operand_index = 1" in by_target["kernel_library_scale_add"]
