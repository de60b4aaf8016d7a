#!/usr/bin/env python3
"""Builds and runs one consumer project of streamlike, the way a user of that build system would.

Usage: consumer_test.py KIND --source-root DIR --build-root DIR --work DIR [--nvcc NVCC]
                        --prefix P --libdir L --includedir I --version V --meson MESON...

KIND (each project is copied from test/consumers/KIND into WORK/KIND, fresh, with consumer.cpp and
consumer.cu):
  cmake  `meson install` of BUILD_ROOT, staged with --destdir, then a CMake project that calls
         find_package(streamlike) (CMAKE_PREFIX_PATH: the staged prefix) and links streamlike::streamlike
  make   the same staged install, then a plain Makefile using `pkg-config --cflags --libs streamlike`
         (PKG_CONFIG_PATH: the staged pkgconfig folder; --define-variable=prefix relocates the
         staged .pc, whose prefix is the configured one)
  meson  a release-style tarball of the source tree (meson.build, meson_options.txt, include/, src/,
         packaging/) offered through subprojects/streamlike.wrap, a [wrap-file] with [provide]
         dependency_names = streamlike. The tarball sits in subprojects/packagecache/, where Meson
         takes it instead of downloading (--wrap-mode=nodownload proves that), verifies its sha256 and
         unpacks it; --force-fallback-for=streamlike keeps an installed streamlike out of the way.
         The subproject's setup must warn of nothing, and `meson install` of the consumer must
         install nothing of streamlike, until -Dstreamlike:install=enabled asks for it.
  cmake_cuda, make_cuda, meson_cuda
         the same three routes compiling consumer.cu with NVCC, which is given no -std= but what the
         route carries (nvcc alone would compile C++17, which streamlike's headers refuse).
  extension_cmake, extension_meson, extension_static
         examples/extension (docs/python-extensions.md), a nanobind and a pybind11 module built
         against the staged install with CMake (find_package) or Meson (pkg-config), or with
         streamlike as a Meson subproject built static (no libstreamlike.so needed, none of its
         symbols exported: the form for a wheel), then
         examples/extension/check_extension.py run on them by this Python (which has nanobind
         and pybind11: scripts/setup installs them).
Each program must exit 0 and print its handles and "ok". Every check that fails says what it saw.
Exit status: 0 pass, 1 fail, 77 skip (a tool the build system needs is missing).
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SKIP = 77
TIMEOUT_S = 600
SHOWN_LINES = 40
RELEASE_PATHS = ["meson.build", "meson_options.txt", "include", "src", "packaging", "LICENSE", "README.md"]


class Failure(Exception):
    pass


def run(cmd, cwd=None, env=None):
    print("+ " + " ".join(str(c) for c in cmd), flush=True)
    proc = subprocess.run(
        [str(c) for c in cmd],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT_S,
    )
    if proc.returncode != 0:
        lines = proc.stdout.splitlines()
        raise Failure(
            f"exit status {proc.returncode}: {' '.join(str(c) for c in cmd)}\n" + "\n".join(lines[-SHOWN_LINES:])
        )
    return proc.stdout


def require_tools(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        print(f"SKIP: not installed: {', '.join(missing)} (scripts/setup installs them)")
        sys.exit(SKIP)


def fresh_project(kind, work, source=None):
    project = work / kind
    shutil.rmtree(project, ignore_errors=True)
    shutil.copytree(source or HERE / kind, project)
    shutil.copy2(HERE / "consumer.cpp", project / "consumer.cpp")
    shutil.copy2(HERE / "consumer.cu", project / "consumer.cu")
    return project


def require_nvcc(args):
    if not args.nvcc or not Path(args.nvcc).is_file():
        print(f"SKIP: no nvcc at {args.nvcc or '(none given)'}: the CUDA consumers need the CUDA Toolkit's compiler")
        sys.exit(SKIP)


def nvcc_env(args, env=None):
    """The environment with NVCC's folder first on PATH and NVCC set (Meson reads it)."""
    env = dict(env if env is not None else os.environ)
    env["PATH"] = str(Path(args.nvcc).parent) + os.pathsep + env.get("PATH", "")
    env["NVCC"] = args.nvcc
    return env


def staged_install(args, project):
    """meson install of the main build into PROJECT/stage; returns the staged prefix."""
    stage = project / "stage"
    run(args.meson + ["install", "-C", args.build_root, "--no-rebuild", "--quiet", "--destdir", stage])
    prefix = stage / args.prefix.lstrip("/")
    for installed in [
        staged(args, prefix, args.includedir) / "streamlike" / "streamlike.hpp",
        staged(args, prefix, args.libdir) / "pkgconfig" / "streamlike.pc",
        staged(args, prefix, args.libdir) / "cmake" / "streamlike" / "streamlikeConfig.cmake",
        staged(args, prefix, args.libdir) / "cmake" / "streamlike" / "streamlikeConfigVersion.cmake",
    ]:
        if not installed.is_file():
            raise Failure(f"meson install did not install {installed.relative_to(stage)}")
    return prefix


def staged(args, prefix, folder):
    """Where an install folder option (relative to the prefix, or absolute) lands under the stage."""
    stage = Path(str(prefix)[: len(str(prefix)) - len(args.prefix.lstrip("/"))])
    return stage / folder.lstrip("/") if os.path.isabs(folder) else prefix / folder


def check_program(program, expected_consumer):
    out = run([program])
    print(out, end="")
    expected = [
        f"streamlike consumer ({expected_consumer}): stream handle 0x1",
        f"streamlike consumer ({expected_consumer}): stream handle 0x2",
        f"streamlike consumer ({expected_consumer}): ok",
    ]
    for line in expected:
        if line not in out.splitlines():
            raise Failure(f"the program's output lacks the line {line!r}")


def cmake_consumer(args, work, cuda=False):
    require_tools("cmake")
    kind = "cmake_cuda" if cuda else "cmake"
    if cuda:
        require_nvcc(args)
    project = fresh_project(kind, work)
    prefix = staged_install(args, project)
    build = project / "build"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    compiler = [f"-DCMAKE_CUDA_COMPILER={args.nvcc}"] if cuda else []
    env = nvcc_env(args) if cuda else None
    run(
        [
            "cmake",
            "-S",
            project,
            "-B",
            build,
            *generator,
            *compiler,
            f"-DCMAKE_PREFIX_PATH={prefix}",
            "-DCMAKE_BUILD_TYPE=Release",
        ],
        env=env,
    )
    # The package found must be the one just installed, not some other streamlike on the machine.
    cache = (build / "CMakeCache.txt").read_text()
    expected_dir = staged(args, prefix, args.libdir) / "cmake" / "streamlike"
    if f"streamlike_DIR:PATH={expected_dir}" not in cache:
        raise Failure(f"find_package(streamlike) did not use {expected_dir}")
    run(["cmake", "--build", build], env=env)
    if cuda:
        check_program(build / "consumer_cu", "CMake, CUDA")
    else:
        check_program(build / "consumer", "CMake")


def make_consumer(args, work, cuda=False):
    require_tools("make", "pkg-config")
    kind = "make_cuda" if cuda else "make"
    if cuda:
        require_nvcc(args)
    project = fresh_project(kind, work)
    prefix = staged_install(args, project)
    env = dict(os.environ, PKG_CONFIG_PATH=str(staged(args, prefix, args.libdir) / "pkgconfig"))
    pkg_config = f"pkg-config --define-variable=prefix={prefix}"
    # The .pc file found must be the one just installed.
    found_prefix = run(pkg_config.split() + ["--variable=prefix", "streamlike"], env=env).strip()
    if found_prefix != str(prefix):
        raise Failure(f"pkg-config found a streamlike with prefix {found_prefix}, expected {prefix}")
    if cuda:
        run(["make", "-C", project, f"PKG_CONFIG={pkg_config}", f"NVCC={args.nvcc}"], env=env)
        check_program(project / "consumer_cu", "make + pkg-config, nvcc")
    else:
        run(["make", "-C", project, f"PKG_CONFIG={pkg_config}"], env=env)
        check_program(project / "consumer", "make + pkg-config")


def release_tarball(args, destination):
    """A tarball of the source tree as a release would ship it: streamlike-VERSION/..."""
    top = f"streamlike-{args.version}"
    root = Path(args.source_root)
    with tarfile.open(destination, "w:gz") as tar:
        for name in RELEASE_PATHS:
            path = root / name
            if path.exists():
                tar.add(path, arcname=f"{top}/{name}", filter=lambda info: None if "__pycache__" in info.name else info)
    return top


def offer_wrap(args, subprojects):
    """A release tarball in SUBPROJECTS/packagecache and the [wrap-file] naming it; returns its folder name."""
    filename = f"streamlike-{args.version}.tar.gz"
    cache = subprojects / "packagecache"
    cache.mkdir(parents=True)
    top = release_tarball(args, cache / filename)
    digest = hashlib.sha256((cache / filename).read_bytes()).hexdigest()
    template = (HERE / "meson" / "subprojects" / "streamlike.wrap.in").read_text()
    (subprojects / "streamlike.wrap.in").unlink(missing_ok=True)
    (subprojects / "streamlike.wrap").write_text(
        template.replace("@DIRECTORY@", top)
        .replace("@FILENAME@", filename)
        .replace("@SHA256@", digest)
        .replace("@URL@", (cache / filename).as_uri())
    )
    return top


def meson_consumer(args, work, cuda=False):
    if cuda:
        require_nvcc(args)
    project = fresh_project("meson_cuda" if cuda else "meson", work)
    env = nvcc_env(args) if cuda else None
    subprojects = project / "subprojects"
    top = offer_wrap(args, subprojects)
    build = project / "build"
    out = run(
        args.meson + ["setup", build, project, "--wrap-mode=nodownload", "--force-fallback-for=streamlike"], env=env
    )
    # dependency('streamlike') must come from the subproject unpacked from the tarball, through its
    # meson.override_dependency ("overridden"), and the library must be built inside this build.
    lines = out.splitlines()
    if not (subprojects / top / "meson.build").is_file():
        raise Failure(f"the wrap was not unpacked into subprojects/{top}")
    if not any(line.startswith("Executing subproject streamlike") for line in lines):
        raise Failure("meson did not run the streamlike subproject:\n" + "\n".join(lines[-SHOWN_LINES:]))
    if not any(
        line.startswith("Dependency streamlike") and "found: YES" in line and "(overridden)" in line for line in lines
    ):
        raise Failure(
            "dependency('streamlike') was not the subproject's override_dependency:\n"
            + "\n".join(line for line in lines if "streamlike" in line.lower())
        )
    # A subproject's setup warns of nothing (a deprecation in streamlike's meson.build is the
    # consumer's noise).
    noise = [line for line in lines if line.startswith("streamlike|") and ("WARNING" in line or "DEPRECATION" in line)]
    if noise:
        raise Failure("the streamlike subproject warned the consumer:\n" + "\n".join(noise))
    run(args.meson + ["compile", "-C", build], env=env)
    if not list((build / "subprojects" / top).glob("libstreamlike.*")):
        raise Failure(f"libstreamlike was not built in build/subprojects/{top}")
    if cuda:
        check_program(build / "consumer_cu", "Meson subproject, CUDA")
    else:
        check_program(build / "consumer", "Meson subproject")
    check_subproject_install(args, build, env)


def installed_streamlike(stage):
    """The files of streamlike under a staged install: library, headers, pkg-config and CMake files."""
    if not stage.exists():
        return []
    files = (p.relative_to(stage).as_posix() for p in stage.rglob("*") if not p.is_dir())
    return sorted(path for path in files if "streamlike" in path)


def check_subproject_install(args, build, env):
    """`meson install` of the consumer installs nothing of streamlike; with -Dstreamlike:install=enabled
    it installs the library and its headers."""
    stage = build.parent / "stage-default"
    run(args.meson + ["install", "-C", build, "--no-rebuild", "--quiet", "--destdir", stage], env=env)
    found = installed_streamlike(stage)
    if found:
        raise Failure("meson install of the consumer installed streamlike unasked:\n" + "\n".join(found))
    run(args.meson + ["configure", build, "-Dstreamlike:install=enabled"], env=env)
    stage = build.parent / "stage-asked"
    run(args.meson + ["install", "-C", build, "--quiet", "--destdir", stage], env=env)
    found = installed_streamlike(stage)
    for wanted in ("libstreamlike.", "include/streamlike", "streamlike.pc"):
        if not any(wanted in path for path in found):
            raise Failure(
                f"with -Dstreamlike:install=enabled, meson install installed no {wanted}:\n" + "\n".join(found)
            )


def require_python_modules():
    missing = []
    for module in ("nanobind", "pybind11"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        print(f"SKIP: {', '.join(missing)} not installed for {sys.executable} (scripts/setup installs them)")
        sys.exit(SKIP)
    import sysconfig

    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        print(f"SKIP: no Python.h for {sys.executable}: the development headers are not installed")
        sys.exit(SKIP)


def extension_consumer(args, work, cuda=False):
    """examples/extension against the staged install, built with CMake or Meson, or with a static
    libstreamlike from a subproject (the form to ship in a wheel); checked from Python."""
    del cuda
    require_python_modules()
    kind = args.kind
    if kind == "extension_cmake":
        require_tools("cmake")
    elif kind == "extension_meson":
        require_tools("pkg-config")
    project = fresh_project(kind, work, source=Path(args.source_root) / "examples" / "extension")
    build = project / "build"
    if kind == "extension_static":
        # No install: streamlike as a subproject, built as a static library into each module.
        subprojects = project / "subprojects"
        subprojects.mkdir()
        offer_wrap(args, subprojects)
        run(
            args.meson
            + [
                "setup",
                build,
                project,
                "--wrap-mode=nodownload",
                "--force-fallback-for=streamlike",
                "-Dstreamlike:default_library=static",
            ]
        )
        run(args.meson + ["compile", "-C", build])
        for module in build.glob("streams_*.so"):
            needed = run(["readelf", "-d", module]) if shutil.which("readelf") else ""
            if "libstreamlike" in needed:
                raise Failure(f"{module.name} still needs libstreamlike.so:\n{needed}")
            exported = run(["nm", "-D", "--defined-only", module]) if shutil.which("nm") else ""
            leaked = [line for line in exported.splitlines() if "streamlike" in line]
            if leaked:
                raise Failure(f"{module.name} exports streamlike's symbols:\n" + "\n".join(leaked[:10]))
    elif kind == "extension_cmake":
        prefix = staged_install(args, project)
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        run(
            [
                "cmake",
                "-S",
                project,
                "-B",
                build,
                *generator,
                f"-DCMAKE_PREFIX_PATH={prefix}",
                f"-DPython_EXECUTABLE={sys.executable}",
            ]
        )
        run(["cmake", "--build", build])
    else:
        prefix = staged_install(args, project)
        pkgconfig = staged(args, prefix, args.libdir) / "pkgconfig"
        # The staged .pc names the configured prefix: a copy that names the staged one.
        relocated = project / "pkgconfig"
        relocated.mkdir()
        text = (pkgconfig / "streamlike.pc").read_text()
        (relocated / "streamlike.pc").write_text(text.replace(f"prefix={args.prefix}\n", f"prefix={prefix}\n", 1))
        env = dict(os.environ, PKG_CONFIG_PATH=str(relocated))
        run(args.meson + ["setup", build, project], env=env)
        run(args.meson + ["compile", "-C", build], env=env)
    out = run([sys.executable, project / "check_extension.py", build])
    print(out, end="")
    if "PASS:" not in out:
        raise Failure("check_extension.py did not pass")


KINDS = {
    "cmake": (cmake_consumer, False),
    "make": (make_consumer, False),
    "meson": (meson_consumer, False),
    "cmake_cuda": (cmake_consumer, True),
    "make_cuda": (make_consumer, True),
    "meson_cuda": (meson_consumer, True),
    "extension_cmake": (extension_consumer, False),
    "extension_meson": (extension_consumer, False),
    "extension_static": (extension_consumer, False),
}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=sorted(KINDS))
    p.add_argument("--source-root", required=True)
    p.add_argument("--build-root", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--prefix", required=True)
    p.add_argument("--libdir", required=True)
    p.add_argument("--includedir", required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--nvcc", default="", help="the CUDA compiler, for the *_cuda kinds")
    p.add_argument("--meson", nargs="+", required=True, help="the meson command (last option)")
    args = p.parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    try:
        route, cuda = KINDS[args.kind]
        route(args, work, cuda=cuda)
    except Failure as e:
        print(f"FAIL {args.kind} consumer: {e}")
        return 1
    print(f"PASS {args.kind} consumer")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
