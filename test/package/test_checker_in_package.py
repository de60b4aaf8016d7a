"""The package ships streamcheck's library (docs/streamcheck.md, "Where CUPTI is found"): installed
beside __init__.py, where streamlike.check looks for it; needing neither libcupti nor the shared
CUDA runtime; loadable where neither the toolkit nor a driver is, and off until asked."""

import os
import shutil
import subprocess
import sys

import pytest


def _checker(installed):
    path = os.path.join(installed.site, "streamlike", "libstreamlike_check.so")
    assert os.path.isfile(path), f"pip install . put no libstreamlike_check.so in {os.path.dirname(path)}"
    return path


def test_the_checker_library_lies_beside_the_package(installed):
    _checker(installed)


def test_the_checker_needs_no_cupti_and_no_cuda_runtime(installed):
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed")
    out = subprocess.run([readelf, "-d", _checker(installed)], capture_output=True, text=True, check=True).stdout
    needed = [line.split("[")[-1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
    assert needed, out
    assert not [n for n in needed if n.startswith(("libcupti", "libcudart", "libcuda."))], needed


def test_the_checker_loads_and_stays_off_without_being_asked(installed):
    # In a process of its own: its copy of streamlike would otherwise join this one's registry.
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIKE_CHECK")}
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import ctypes, os, sys; lib = ctypes.CDLL(sys.argv[1], mode=os.RTLD_LOCAL); "
            "print(lib.streamlike_check_active())",
            _checker(installed),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0 and out.stdout.strip() == "0" and out.stderr == "", out
