"""One process of test_current_stream_copies.py: imports, in the order its arguments name, the
package (its own static copy of streamlike), the bridge suite's module linked to libstreamlike.so
("shared"), the same module holding a static copy of its own ("static"), CuPy's stand-in (imported
by the import system, from a folder on sys.path) and the stand-ins for libtorch_cuda.so and
libtvm_ffi.so ("torch", "tvm"); then checks that every copy sees one current-stream registry.
Prints "ok" when every check held.

    python current_stream_copies_child.py CUPY_DIR package cupy shared static
"""

import ctypes
import importlib
import os
import sys

cupy_dir, order = sys.argv[1], sys.argv[2:]
sys.path[:0] = [os.environ["STREAMLIKE_PACKAGE_SITE"], os.environ["STREAMLIKE_BRIDGE_MODULES_DIR"], cupy_dir]

_cuda = ctypes.CDLL(os.environ["STREAMLIKE_FAKE_CUDA_LIBRARY"])
_frameworks = os.environ["STREAMLIKE_FAKE_FRAMEWORKS_DIR"]
MODULES = {"shared": "streamlike_current_nb_test", "static": "streamlike_current_static_test"}


def new_stream():
    """A stream of the fake CUDA on device 0, as any object with __cuda_stream__ hands it over."""
    handle = ctypes.c_void_p()
    assert _cuda.cudaStreamCreate(ctypes.byref(handle)) == 0
    return type("ForeignStream", (), {"__cuda_stream__": lambda self, h=handle.value: (0, h)})(), handle.value


loaded = {}
for name in order:
    if name in MODULES:
        loaded[name] = importlib.import_module(MODULES[name])
    elif name == "package":
        loaded[name] = importlib.import_module("streamlike")
    elif name == "cupy":
        loaded[name] = importlib.import_module("cupy")
    elif name in ("torch", "tvm"):
        soname = "libtorch_cuda.so" if name == "torch" else "libtvm_ffi.so"
        loaded[name] = ctypes.CDLL(os.path.join(_frameworks, soname), mode=ctypes.RTLD_GLOBAL)
    else:
        raise SystemExit(f"unknown name {name!r}")

modules = {name: loaded[name] for name in MODULES if name in loaded}
sl = loaded.get("package")
cupy = loaded.get("cupy")
failures = []


def expect(what, got, wanted):
    if got != wanted:
        failures.append(f"{what}: {got:#x}, expected {wanted:#x}" if isinstance(got, int) else f"{what}: {got!r}")


def cupy_sees():
    return cupy is not None and sl is not None  # CuPy's provider lives in the package


def everyone_sees(handle, where, cupy_too=True):
    """Every copy's current_stream(0) is `handle`, and CuPy's where a scope set it (`cupy_too`)."""
    for name, m in modules.items():
        expect(f"{where}: {name}'s current_stream()", m.current_address(0), handle)
    if sl is not None:
        # The package names the legacy default stream by one canonical handle, cudaStreamLegacy.
        expect(f"{where}: the package's current_stream()", sl.current_stream(0).handle, handle or 1)
    if cupy_too and cupy_sees():
        expect(f"{where}: cupy.cuda.get_current_stream()", cupy.cuda.get_current_stream(0).ptr, handle)


stream, handle = new_stream()
everyone_sees(0, "outside any scope")

# A C++ scope in each module: every other copy, the package and CuPy see it.
for name, m in modules.items():
    m.call_inside_scope(stream, lambda name=name: everyone_sees(handle, f"inside {name}'s C++ scope"), 0)
    everyone_sees(0, f"after {name}'s C++ scope")

if sl is not None:
    # The package's use(): every module's copy sees it.
    with sl.use(stream):
        everyone_sees(handle, "inside streamlike.use")
    everyone_sees(0, "after streamlike.use")
    # A provider registered through the package's table by one module is asked by every copy.
    other, other_handle = new_stream()
    for name, m in modules.items():
        expect(f"{name} joins the package", m.join_package(True, other_handle), 0)
        # A read-only framework sets nobody else's stream: CuPy keeps its own.
        everyone_sees(other_handle, f"with a framework {name} registered naming a stream", cupy_too=False)
        expect(f"{name} leaves the package", m.join_package(False, 0), 0)
        everyone_sees(0, f"after the framework {name} registered left")

if cupy_sees() and modules:
    # CuPy's own block inside a module's scope wins in every copy, the null stream included.
    inner, inner_handle = new_stream()
    for name, m in modules.items():
        for block, block_handle in (
            (cupy.cuda.ExternalStream(inner_handle, 0), inner_handle),
            (cupy.cuda.Stream.null, 0),
        ):

            def inside(block=block, block_handle=block_handle, name=name):
                with block:
                    everyone_sees(block_handle, f"CuPy's block {block_handle:#x} inside {name}'s scope")
                everyone_sees(handle, f"after CuPy's block inside {name}'s scope")

            m.call_inside_scope(stream, inside, 0)

if "torch" in loaded and sl is not None and modules:
    # torch's own block on its default stream (handle 0) inside use(s), tvm-ffi still naming s: the
    # inner block wins in every copy (the checker's copy reads as these do).
    torch = loaded["torch"]
    torch.aoti_torch_get_current_cuda_stream.argtypes = [ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)]
    torch.torch_set_current_cuda_stream.argtypes = [ctypes.c_void_p, ctypes.c_int32]
    with sl.use(stream):
        saved = ctypes.c_void_p()
        assert torch.aoti_torch_get_current_cuda_stream(0, ctypes.byref(saved)) == 0
        expect("torch inside use", saved.value or 0, handle)
        assert torch.torch_set_current_cuda_stream(None, 0) == 0  # torch.cuda.stream(default_stream())
        for name, m in modules.items():
            expect(f"torch's default-stream block inside use: {name}", m.current_address(0), 0)
        expect("torch's default-stream block inside use: the package", sl.current_stream(0).handle, 1)  # canonical
        assert torch.torch_set_current_cuda_stream(saved, 0) == 0  # the block ends
        everyone_sees(handle, "after torch's block inside use")

if failures:
    print("\n".join(failures))
    raise SystemExit(1)
print("ok")
