"""One current-stream registry per process (docs/current-stream.md, "One registry per process"),
from Python, on a CPU: the package (its own static copy of streamlike), an extension module linked
to libstreamlike.so and one holding its own static copy, CuPy's stand-in and the stand-ins for
torch and tvm-ffi, imported in each order (CuPy before and after the package, the package imported
or not, either module first), each order in a process of its own (current_stream_copies_child.py):
a C++ scope opened in any module is the current stream of every copy and of CuPy, a use() block of
the package is every module's, a provider registered by any is asked by all, and a framework's own
block inside a scope wins everywhere, a default stream included.

Needs what package-current-stream-matrix needs (meson test package-current-stream-copies sets it).
"""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
NEEDED = [
    "STREAMLIKE_PACKAGE_SITE",
    "STREAMLIKE_BRIDGE_MODULES_DIR",
    "STREAMLIKE_FAKE_CUDA_LIBRARY",
    "STREAMLIKE_FAKE_FRAMEWORKS_DIR",
]
if any(not os.environ.get(v) for v in NEEDED):
    pytest.skip(f"needs {', '.join(NEEDED)} (meson test package-current-stream-copies)", allow_module_level=True)
if not any(
    f.startswith("streamlike_current_static_test") for f in os.listdir(os.environ["STREAMLIKE_BRIDGE_MODULES_DIR"])
):
    pytest.skip(
        "the bridge suite's static-copy module (streamlike_current_static_test) is not built", allow_module_level=True
    )

ORDERS = [
    ["package", "cupy", "shared", "static"],  # CuPy after the package, nothing of the package in between
    ["cupy", "package", "static", "shared"],  # CuPy before the package
    ["static", "shared"],  # no package
    ["shared", "static", "cupy", "package"],  # the modules' copies first
    ["static", "cupy", "package", "shared"],  # a static copy first, the shared library last
    ["tvm", "torch", "static", "package", "shared"],  # with torch and tvm-ffi
]

CUPY_INIT = '''"""CuPy's stand-in (test/package/fake_cupy.py), imported by the import system."""
import ctypes, os, sys
import fake_cupy
_cuda = ctypes.CDLL(os.environ["STREAMLIKE_FAKE_CUDA_LIBRARY"])
def _device():
    d = ctypes.c_int(-1)
    assert _cuda.cudaGetDevice(ctypes.byref(d)) == 0
    return d.value
cuda = fake_cupy.make(_device).cuda
sys.modules["cupy.cuda"] = cuda
'''


@pytest.fixture(scope="module")
def cupy_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cupy_stand_in")
    (folder / "cupy").mkdir()
    (folder / "cupy" / "__init__.py").write_text(CUPY_INIT)
    return str(folder)


@pytest.mark.parametrize("order", ORDERS, ids=["-".join(o) for o in ORDERS])
def test_every_copy_sees_one_registry(cupy_dir, order):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")])}
    env.pop("STREAMLIKE_CURRENT_STREAM_REGISTRY", None)  # a fresh process publishes its own
    child = subprocess.run(
        [sys.executable, os.path.join(HERE, "current_stream_copies_child.py"), cupy_dir, *order],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0 and child.stdout.strip().endswith("ok"), child.stdout + child.stderr
