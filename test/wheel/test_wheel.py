"""The distributable wheel, as a user without a compiler gets it (docs/python-package.md).

scripts/wheel builds the sdist and, from it, the wheel for this interpreter, repaired by auditwheel
(in a tree with uncommitted changes, which the sdist would lack, the wheel of the tree as it is).
The wheel is then checked (auditwheel's tag, the extension's shared-library needs) and installed,
offline and without building anything, into a fresh virtual environment whose PATH holds only that
environment's python and pip: no compiler, no CUDA Toolkit. There it is imported, and what a user
relies on is read back: the version (meson.build's), the stubs, get_include()'s headers, the
error for a machine without a CUDA driver, and python -m streamlike.check (its help, a checked run
of a program, the pytest plugin's entry point).

Environment: STREAMLIKE_SOURCE (the repository root; default two folders up),
STREAMLIKE_WHEELHOUSE (the build requirements for pip, offline; default .deps/wheels), and
STREAMLIKE_WHEELS: a folder of wheels built already (scripts/wheel-matrix's OUTDIR/wheels); each
of them this interpreter can install is checked the same way, besides the one built here.
"""

import ast
import glob
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import venv
import zipfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("STREAMLIKE_SOURCE") or os.path.dirname(os.path.dirname(HERE))
WHEELHOUSE = os.environ.get("STREAMLIKE_WHEELHOUSE") or os.path.join(SOURCE, ".deps", "wheels")
# What the extension may need at load time: the C and C++ runtimes every manylinux system has. The
# CUDA runtime is linked in statically, and the driver (libcuda.so.1) is loaded by it at run time.
SYSTEM_LIBRARIES = {
    "libc.so.6",
    "libm.so.6",
    "libstdc++.so.6",
    "libgcc_s.so.1",
    "ld-linux-x86-64.so.2",
    "libpthread.so.0",
    "libdl.so.2",
    "librt.so.1",
}
TOOLCHAIN_COMMANDS = ("cc", "c++", "gcc", "g++", "clang", "clang++", "nvcc")


def missing(why):
    # CI (which sets CI) runs scripts/setup, which installs the tools: there a missing one fails.
    (pytest.fail if os.environ.get("CI", "") not in ("", "0", "false") else pytest.skip)(why)


def meson_build_version():
    with open(os.path.join(SOURCE, "meson.build")) as f:
        project = re.search(r"project\((.*?)\)\n", f.read(), re.S)
    return re.search(r"version:\s*'([^']+)'", project.group(1)).group(1)


def uncommitted_changes():
    """Why the sdist (the committed tree) would not be the tree tested, or None."""
    status = subprocess.run(
        ["git", "-C", SOURCE, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
    )
    if status.returncode != 0:
        return f"{SOURCE} is not a git checkout"
    return f"uncommitted changes ({' '.join(status.stdout.split())})" if status.stdout.strip() else None


class Built:
    def __init__(self, wheel, log, from_tree, sdists=()):
        self.log = log
        self.from_tree = from_tree  # why the wheel was built from the tree, not the sdist (None: from the sdist)
        self.wheel = wheel
        self.sdists = list(sdists)
        # streamlike_cu13-0.1.0-...: the distribution streamlike-cu13
        self.distribution = os.path.basename(wheel).split("-")[0].replace("_", "-")
        self.given = False  # True for a wheel of STREAMLIKE_WHEELS


def given_wheels():
    """The wheels of STREAMLIKE_WHEELS this interpreter can install (its CPython tag)."""
    folder = os.environ.get("STREAMLIKE_WHEELS")
    if not folder:
        return []
    cp = f"cp{sys.version_info.major}{sys.version_info.minor}"
    return sorted(glob.glob(os.path.join(folder, f"streamlike_cu*-{cp}-{cp}-*.whl")))


@pytest.fixture(scope="module", params=["built here"] + given_wheels(), ids=os.path.basename)
def built(request, tmp_path_factory):
    if request.param != "built here":
        given = Built(request.param, "", "a wheel of STREAMLIKE_WHEELS, built elsewhere")
        given.given = True
        return given
    return build_here(tmp_path_factory)


def build_here(tmp_path_factory):
    if subprocess.run([sys.executable, "-c", "import build, auditwheel"], capture_output=True).returncode != 0:
        missing(f"build and auditwheel are not installed for {sys.executable} (scripts/setup installs them)")
    if shutil.which("patchelf") is None:
        missing("patchelf is not on PATH (scripts/setup installs it)")
    if not glob.glob(os.path.join(WHEELHOUSE, "meson_python-*.whl")):
        missing(f"no build requirements in the wheelhouse {WHEELHOUSE} (scripts/setup downloads them)")
    out = str(tmp_path_factory.mktemp("dist"))
    from_tree = uncommitted_changes()
    result = subprocess.run(
        ["bash", os.path.join(SOURCE, "scripts", "wheel"), "--out", out, sys.executable]
        + (["--from-tree"] if from_tree else []),
        capture_output=True,
        text=True,
        env={**os.environ, "STREAMLIKE_WHEELHOUSE": WHEELHOUSE},
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    wheels = glob.glob(os.path.join(out, "*.whl"))
    assert len(wheels) == 1, (wheels, log)
    return Built(wheels[0], log, from_tree, glob.glob(os.path.join(out, "*.tar.gz")))


def extension_in(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if re.fullmatch(r"streamlike/_streamlike\..*\.so", n)]
        assert len(names) == 1, z.namelist()
        return z.read(names[0])


# --- The files and their tags -------------------------------------------------------------------


def test_the_wheel_was_built_from_the_sdist(built):
    if built.given:
        pytest.skip("a wheel built elsewhere: how is scripts/wheel's to say")
    if built.from_tree:
        missing(f"{built.from_tree}: the wheel was built from the tree, the sdist not made")
    assert [os.path.basename(s) for s in built.sdists] == [f"streamlike-{meson_build_version()}.tar.gz"]
    assert re.search(r"wheel of streamlike-cu\d+ .*, built from streamlike-.*\.tar\.gz by", built.log), built.log


def test_the_wheel_carries_meson_builds_version(built):
    version = meson_build_version()
    cp = f"cp{sys.version_info.major}{sys.version_info.minor}"
    name = os.path.basename(built.wheel)
    assert re.fullmatch(
        rf"streamlike_cu1[23]-{re.escape(version)}-{cp}-{cp}-manylinux_2_\d+_{platform.machine()}\.whl", name
    ), name


def metadata_of(wheel):
    with zipfile.ZipFile(wheel) as z:
        dist_info = f"{os.path.basename(wheel).split('-')[0]}-{meson_build_version()}.dist-info"
        return z.read(f"{dist_info}/METADATA").decode(), set(z.namelist()), dist_info


def test_the_metadata_names_the_cuda_major_the_driver_and_carries_the_license(built):
    metadata, names, dist_info = metadata_of(built.wheel)
    major = re.fullmatch(r"streamlike-cu(\d+)", built.distribution).group(1)
    headers, _, description = metadata.partition("\n\n")
    assert f"Name: {built.distribution}\n" in headers, headers
    assert f"Classifier: Environment :: GPU :: NVIDIA CUDA :: {major}\n" in headers, headers
    assert re.search(rf"^Summary: .*\(CUDA {major}: NVIDIA driver R\d+ or newer\)$", headers, re.M), headers
    assert "License-Expression: Apache-2.0" in headers, headers
    assert f"{dist_info}/licenses/LICENSE" in names, sorted(names)
    # The description is the user's page (python/README.md), not the developer's guide.
    with open(os.path.join(SOURCE, "python", "README.md")) as f:
        assert description.strip() == f.read().strip()


def test_auditwheel_grants_the_manylinux_tag_the_wheel_is_named_by(built):
    shown = subprocess.run([sys.executable, "-m", "auditwheel", "show", built.wheel], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    text = " ".join(shown.stdout.split())  # auditwheel wraps its lines
    granted = re.search(r'consistent with the following platform tag: "([^"]+)"', text)
    assert granted, text
    assert granted.group(1).startswith("manylinux_2_"), text
    platform_tag = os.path.basename(built.wheel)[: -len(".whl")].split("-")[-1]
    assert platform_tag.split(".")[0] == granted.group(1)
    # Nothing outside the manylinux policy's system libraries: none to bundle, none missing.
    assert "external shared libraries are required" not in text, text
    with zipfile.ZipFile(built.wheel) as z:
        assert not [n for n in z.namelist() if ".libs/" in n], "auditwheel bundled libraries"
        wheel_file = z.read(f"{os.path.basename(built.wheel).split('-')[0]}-{meson_build_version()}.dist-info/WHEEL")
    assert f"-{granted.group(1)}".encode() in wheel_file, wheel_file


def test_the_extension_needs_no_cuda_library_at_load_time(built, tmp_path):
    from elftools.elf.dynamic import DynamicSection  # pyelftools, which auditwheel depends on
    from elftools.elf.elffile import ELFFile

    path = tmp_path / "extension.so"
    path.write_bytes(extension_in(built.wheel))
    needed, search_paths = set(), []
    with open(path, "rb") as f:
        for section in ELFFile(f).iter_sections():
            if isinstance(section, DynamicSection):
                for tag in section.iter_tags():
                    if tag.entry.d_tag == "DT_NEEDED":
                        needed.add(tag.needed)
                    elif tag.entry.d_tag in ("DT_RPATH", "DT_RUNPATH"):
                        search_paths.append(tag.entry.d_tag)
    assert needed and needed <= SYSTEM_LIBRARIES, needed
    assert not search_paths, search_paths
    # The static CUDA runtime inside loads the driver by this name when CUDA is first used.
    assert b"libcuda.so.1" in path.read_bytes()


# --- Installed where there is no compiler -------------------------------------------------------


class CompilerFree:
    def __init__(self, env, site):
        self.env = env  # the environment its commands run with: PATH holds python and pip only
        self.site = site


def run_in(where, *args):
    return subprocess.run(list(args), capture_output=True, text=True, env=where.env, cwd="/")


@pytest.fixture(scope="module")
def compiler_free(built, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compiler-free")
    env_dir = tmp / "venv"
    try:
        venv.EnvBuilder(with_pip=True).create(str(env_dir))
    except Exception as e:  # Debian without python3-venv: no ensurepip
        missing(f"cannot create a virtual environment with pip ({e}); install python3-venv")
    # PATH is one folder of launchers for the environment's python and pip (a launcher, not a
    # symbolic link: Python finds its environment from the path it was started by).
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for name, target in (("python", "python"), ("python3", "python"), ("pip", "pip")):
        launcher = bin_dir / name
        launcher.write_text(f'#!/bin/sh\nexec "{env_dir / "bin" / target}" "$@"\n')
        launcher.chmod(0o755)
    env = {
        "PATH": str(bin_dir),
        "HOME": str(tmp),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    site = subprocess.run(
        [str(env_dir / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return CompilerFree(env, site)


def test_the_environment_has_no_compiler_and_no_cuda_toolkit(compiler_free):
    found = run_in(
        compiler_free,
        "python",
        "-c",
        "import shutil, sys; print(' '.join(c for c in sys.argv[1:] if shutil.which(c)))",
        *TOOLCHAIN_COMMANDS,
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == ""
    assert not any(k.startswith("CUDA") for k in compiler_free.env)


@pytest.fixture(scope="module")
def installed(built, compiler_free):
    # --no-index and --only-binary: pip may neither download nor build anything.
    result = run_in(
        compiler_free, "pip", "install", "--no-index", "--no-deps", "--only-binary=:all:", "--no-cache-dir", built.wheel
    )
    assert result.returncode == 0, result.stdout + result.stderr
    compiler_free.distribution = built.distribution
    return compiler_free


FACTS = r"""
import ctypes, json, os, sys
import streamlike
facts = {"file": streamlike.__file__, "version": streamlike.__version__, "all": list(streamlike.__all__)}
include = streamlike.get_include()
facts["include"] = sorted(os.path.relpath(os.path.join(d, f), include) for d, _, fs in os.walk(include) for f in fs)
facts["package_files"] = sorted(os.listdir(os.path.dirname(streamlike.__file__)))
try:
    ctypes.CDLL("libcuda.so.1")
    facts["driver"] = True
except OSError:
    facts["driver"] = False
try:
    streamlike.Stream.create()
    facts["create"] = "ok"
except Exception as e:
    facts["create"] = f"{type(e).__name__}: {e}"
with open("/proc/self/maps") as maps:
    facts["cuda_libraries_loaded"] = sorted({l.split()[-1] for l in maps if "libcudart" in l or "libnvrtc" in l})
print(json.dumps(facts))
"""


@pytest.fixture(scope="module")
def facts(installed):
    result = run_in(installed, "python", "-c", FACTS)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def test_pip_installs_the_wheel_without_building_it(installed):
    listed = run_in(installed, "pip", "show", "--files", installed.distribution)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"streamlike/_streamlike\..*\.so", listed.stdout), listed.stdout


def test_it_imports_from_the_environment_with_meson_builds_version(installed, facts):
    assert facts["file"].startswith(installed.site + os.sep), facts["file"]
    assert facts["version"] == meson_build_version()


def test_the_stubs_are_installed_and_declare_the_public_api(installed, facts):
    assert {"__init__.pyi", "_use.pyi", "py.typed"} <= set(facts["package_files"]), facts["package_files"]
    with open(os.path.join(installed.site, "streamlike", "__init__.pyi")) as f:
        stub = ast.parse(f.read())
    declared = set()
    for node in ast.walk(stub):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            declared.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            declared.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared.add(node.target.id)
        elif isinstance(node, ast.Assign):
            declared.update(t.id for t in node.targets if isinstance(t, ast.Name))
    assert set(facts["all"]) <= declared, sorted(set(facts["all"]) - declared)


def test_a_typed_program_passes_mypy_strict_against_the_installed_stubs(installed):
    if subprocess.run([sys.executable, "-c", "import mypy"], capture_output=True).returncode != 0:
        missing("mypy is not installed (scripts/setup installs it)")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull]
        + [os.path.join(SOURCE, "test", "package", "typed_sample.py")],
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": installed.site},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_get_include_holds_the_c_abi_headers_and_the_package_the_pxd(facts):
    for header in ("owned_stream.h", "owned_stream_python.h", "current_stream_provider.h", "package_api.h"):
        assert os.path.join("streamlike", "c", header) in facts["include"], facts["include"]
    assert "owned_stream.pxd" in facts["package_files"]


def test_without_a_driver_import_works_and_creating_a_stream_says_why_it_cannot(facts):
    # The import above needed no CUDA library of the system: the runtime is inside the extension.
    assert facts["cuda_libraries_loaded"] == []
    if facts["driver"]:  # a GPU machine: the driver is found at run time
        assert facts["create"] == "ok" or "no CUDA device" in facts["create"], facts["create"]
    else:
        assert facts["create"].startswith("RuntimeError: streamlike: shared_stream::create: "), facts["create"]
        assert "no CUDA driver found: libcuda.so.1 could not be loaded. Install the NVIDIA driver" in facts["create"]


# --- streamcheck from the installed wheel -------------------------------------------------------


def test_the_checker_command_shows_its_help_without_cuda(installed):
    shown = run_in(installed, "python", "-m", "streamlike.check", "--help")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "usage: python -m streamlike.check [options] (script.py | -m module | program)" in shown.stdout
    assert "--fail" in shown.stdout and "--sarif" in shown.stdout


def test_a_checked_run_without_a_gpu_runs_the_program_and_says_nothing_was_checked(installed, tmp_path):
    script = tmp_path / "program.py"
    script.write_text("import sys\nprint('ran', sys.argv[1:])\nsys.exit(3)\n")
    out = tmp_path / "out.json"
    ran = run_in(installed, "python", "-m", "streamlike.check", "--fail", "--json", str(out), str(script), "a")
    # The library is the wheel's own (beside the package): found without --library.
    assert "libstreamlike_check.so not found" not in ran.stderr, f"the wheel ships no checker library: {ran.stderr}"
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert "ran ['a']" in ran.stdout
    merged = json.loads(out.read_text())
    assert merged["schema"] == "streamlike.check/1" and merged["exit_status"] == 3, merged
    # The program starts no CUDA, on a GPU machine too: no process record, said so, and no problem.
    assert merged["processes"] == [] and merged["problems"] == [], merged
    assert "no process of the program initialized CUDA (nothing to check)" in ran.stderr, ran.stderr


def test_the_wheel_declares_the_pytest_plugin(installed):
    found = run_in(
        installed,
        "python",
        "-c",
        "from importlib.metadata import entry_points\n"
        # The distribution is streamlike, or streamlike-cu13 / -cu12 as the wheels are named.
        "print(sorted(e.value for e in entry_points(group='pytest11') if e.dist.name.startswith('streamlike')))",
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "['streamlike.pytest_plugin']"
