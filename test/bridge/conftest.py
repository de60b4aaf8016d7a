"""pytest setup for the Python bridge tests: finds the test extension modules and hands each
test the modules, one run per binding library (fixture `bridge`).

Under `meson test` the build folder is on PYTHONPATH and STREAMLIKE_PY_MODULES names the modules
that were built. Run by hand, set PYTHONPATH=BUILD/test/bridge, or STREAMLIKE_PY_BUILD_DIR=BUILD;
without either, ./build-py (the folder docs/python-bridge.md builds) is tried.
"""

import importlib
import os
import sys

import pytest

MODULES = {"streamlike_nb_test": "nanobind", "streamlike_pb_test": "pybind11"}
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _add_build_dir():
    build = os.environ.get("STREAMLIKE_PY_BUILD_DIR")
    candidates = [os.path.join(build, "test", "bridge")] if build else []
    candidates.append(os.path.join(REPO_ROOT, "build-py", "test", "bridge"))
    for folder in candidates:
        if os.path.isdir(folder) and folder not in sys.path:
            sys.path.append(folder)  # after PYTHONPATH: an explicit one wins


_add_build_dir()


def module_names():
    names = os.environ.get("STREAMLIKE_PY_MODULES")
    return [n for n in names.split(",") if n] if names else list(MODULES)


def import_bridge(name):
    """Imports a test module; a module that meson built (or that the caller expects) must import,
    so failing here fails the test instead of skipping it."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        pytest.fail(
            f"cannot import the test module {name} ({e}); build it first: meson setup build-py "
            f"-Dpython=enabled && meson compile -C build-py, then PYTHONPATH=build-py/test/bridge"
        )


def pytest_generate_tests(metafunc):
    if "bridge" in metafunc.fixturenames:
        names = module_names()
        metafunc.parametrize("bridge", names, ids=[MODULES.get(n, n) for n in names], indirect=True)


@pytest.fixture
def bridge(request):
    module = import_bridge(request.param)
    yield module
    # Nothing a test held may leak into the next one.
    module.release_held()


def owned_module_pairs():
    """(producer, consumer) pairs of the owning-exchange test modules, both ways across bindings
    (STREAMLIKE_PY_OWNED_MODULES names those meson built)."""
    names = os.environ.get("STREAMLIKE_PY_OWNED_MODULES", "streamlike_owned_nb_test,streamlike_owned_pb_test")
    modules = [import_bridge(n) for n in names.split(",") if n]
    if len(modules) < 2:
        return [(m, m) for m in modules]
    return [(modules[0], modules[1]), (modules[1], modules[0])]


# The frameworks of the GPU tests, each skipped where it is missing or sees no GPU.


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    return torch


@pytest.fixture(scope="module")
def cupy():
    return pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def core():
    core = pytest.importorskip("cuda.core")
    device = core.Device(0)
    device.set_current()
    return core
