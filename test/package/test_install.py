"""Installing and importing the package, what it ships, and its stubs under mypy --strict."""

import os
import shutil
import site
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def test_pip_install_puts_the_package_with_stubs_in_site_packages(installed):
    folder = os.path.join(installed.site, "streamlike")
    files = os.listdir(folder)
    assert "__init__.py" in files and "__init__.pyi" in files and "py.typed" in files
    assert any(f.startswith("_streamlike.") and f.endswith(".so") for f in files), files


def test_the_installed_package_imports_in_its_own_interpreter(installed):
    if installed.python is None:
        pytest.skip("using a package installed with --target (no interpreter of its own)")
    out = subprocess.run(
        [installed.python, "-c", "import streamlike; print(streamlike.__file__)"],
        capture_output=True,
        text=True,
        cwd="/",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith(installed.site)


def test_the_package_ships_the_owned_stream_c_headers(streamlike):
    include = streamlike.get_include()
    for header in ("owned_stream.h", "owned_stream_python.h"):
        assert os.path.isfile(os.path.join(include, "streamlike", "c", header)), header
    assert os.path.isfile(os.path.join(os.path.dirname(streamlike.__file__), "owned_stream.pxd"))


def test_the_package_exports_its_api(streamlike):
    for name in streamlike.__all__:
        assert hasattr(streamlike, name), name
    for cls in (streamlike.Stream, streamlike.StreamView, streamlike.StreamPool, streamlike.Event):
        assert cls.__module__ == "streamlike", cls
    assert streamlike.Stream.__name__ == "Stream"


def test_the_native_module_holds_the_api_and_its_capsule_only(streamlike):
    # Nothing for benchmarks (bench/ builds its own floors) or tests hides in the native module:
    # each of its names is exported by the package, is the C-API capsule (streamlike/c/package_api.h), or is the
    # hook the package's own import watch calls when CuPy is imported (_cupy_watch.py).
    from streamlike import _streamlike

    internal = {"_C_API", "_register_cupy_if_loaded"}
    extra = {n for n in dir(_streamlike) if not n.startswith("__")} - set(streamlike.__all__) - internal
    assert not extra, f"_streamlike names that are not the package's API: {sorted(extra)}"


def run_mypy(installed, program):
    if shutil.which("mypy") is None and subprocess.run([sys.executable, "-c", "import mypy"]).returncode != 0:
        # CI (which sets CI) installs it: there a missing mypy is a failure, not a skip.
        (pytest.fail if os.environ.get("CI", "") not in ("", "0", "false") else pytest.skip)(
            "mypy is not installed (scripts/setup installs it)"
        )
    env = dict(os.environ)
    # An environment's own site-packages is searched already, and mypy refuses it in MYPYPATH.
    if os.path.realpath(installed.site) not in map(os.path.realpath, site.getsitepackages()):
        env["MYPYPATH"] = installed.site
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            os.devnull,
            "--python-version",
            f"{sys.version_info.major}.{sys.version_info.minor}",
            program,
        ],
        capture_output=True,
        text=True,
        env=env,
    )


def test_a_typed_program_passes_mypy_strict_against_the_stubs(installed, streamlike):
    result = run_mypy(installed, os.path.join(HERE, "typed_sample.py"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_catches_misuse_through_the_stubs(installed, streamlike):
    result = run_mypy(installed, os.path.join(HERE, "typed_misuse.py"))
    assert result.returncode == 1, result.stdout + result.stderr
    # Each marked line is reported, and nothing else.
    with open(os.path.join(HERE, "typed_misuse.py")) as f:
        expected = {i + 1 for i, line in enumerate(f) if "# error" in line}
    reported = {int(line.split(":")[1]) for line in result.stdout.splitlines() if ": error:" in line}
    assert reported == expected, result.stdout
