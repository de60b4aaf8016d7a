#!/usr/bin/env python3
"""Builds libstreamlike with the C++ runtime linked in statically and checks its exports.

Usage: static_runtime_test.py --source-root DIR --work DIR --program CPP --compiler CXX...
                              --toolkit-prefix P [--cccl-include-dir D] --meson MESON...

Some toolchains link the C++ runtime into everything they link (a GCC configured for it, or
-static-libstdc++ in the flags: the GPU machine's /opt/gcc/bin/g++ does). The runtime's objects
then sit inside libstreamlike.so, and unless the library hides them it re-exports about 900 of
their symbols, which interpose the process's own runtime: an extension module on streamlike
imported before torch crashed torch in std::call_once. This configures the source tree again in
WORK (tests, benchmarks, examples and the Python modules off) with
cpp_link_args=-static-libstdc++ -static-libgcc, builds the library, checks that the runtime really
is inside (no libstdc++.so among its DT_NEEDED, __cxa_throw defined in its full symbol table:
otherwise this test would prove nothing), and runs check_exports.py on it. Then it
compiles PROGRAM (across_the_boundary.cpp) with hidden visibility against that library, with the
flags of the build's uninstalled pkg-config file, and runs it: exceptions from a library that
carries its own runtime are caught by type in a program that uses the shared one (which needs
one unwinder in the process: the library links libgcc_s even under -static-libgcc).

Exit status: 0 pass, 1 fail, 77 skip (the compiler has no static C++ runtime, or no nm/readelf).
"""

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import check_exports

SKIP = 77
TIMEOUT_S = 600
SHOWN_LINES = 40
STATIC_RUNTIME_LINK_ARGS = ["-static-libstdc++", "-static-libgcc"]


class Failure(Exception):
    pass


def run(cmd, env=None):
    print("+ " + " ".join(str(c) for c in cmd), flush=True)
    proc = subprocess.run(
        [str(c) for c in cmd], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT_S
    )
    if proc.returncode != 0:
        raise Failure(
            f"exit status {proc.returncode}: {' '.join(str(c) for c in cmd)}\n"
            + "\n".join(proc.stdout.splitlines()[-SHOWN_LINES:])
        )
    return proc.stdout


def has_static_runtime(compiler):
    """True when the compiler can find libstdc++.a (it prints the bare name when it cannot)."""
    proc = subprocess.run(compiler + ["-print-file-name=libstdc++.a"], stdout=subprocess.PIPE, text=True)
    return proc.returncode == 0 and Path(proc.stdout.strip()).is_absolute()


def build_and_run_program(args, work, library, env):
    """Builds PROGRAM against LIBRARY and runs it; False when pkg-config is missing."""
    if shutil.which("pkg-config") is None:
        print(f"note: pkg-config is not installed, so {args.program} was not built against the library")
        return False
    pc_env = dict(env, PKG_CONFIG_PATH=str(work / "meson-uninstalled"))
    flags = run(["pkg-config", "--cflags", "--libs", "streamlike"], env=pc_env).split()
    program = work / "across_the_boundary"
    hidden = ["-fvisibility=hidden", "-fvisibility-inlines-hidden"]  # as extension modules are built
    run(args.compiler + ["-std=c++20", *hidden, args.program, "-o", program, *flags, f"-Wl,-rpath,{library.parent}"])
    out = run([program])
    print(out, end="")
    if out.splitlines()[-1:] != ["ok"]:
        raise Failure(f"{program} did not end with the line ok")
    return True


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source-root", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--program", required=True, help="a C++ program to build against the library and run")
    p.add_argument("--compiler", nargs="+", required=True, help="the C++ compiler command of the main build")
    p.add_argument("--toolkit-prefix", required=True)
    p.add_argument("--cccl-include-dir", default="")
    p.add_argument("--meson", nargs="+", required=True, help="the meson command (last option)")
    args = p.parse_args(argv)

    missing = [tool for tool in ("nm", "readelf") if shutil.which(tool) is None]
    if missing:
        print(f"SKIP: not installed: {', '.join(missing)} (binutils)")
        return SKIP
    if not has_static_runtime(args.compiler):
        print(f"SKIP: {' '.join(args.compiler)} has no static C++ runtime (libstdc++.a); nothing to link in")
        return SKIP

    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CXX=" ".join(args.compiler))
    link_args = "[" + ",".join(f"'{a}'" for a in STATIC_RUNTIME_LINK_ARGS) + "]"
    try:
        run(
            args.meson
            + [
                "setup",
                work,
                args.source_root,
                "-Dtests=disabled",
                "-Dbenchmarks=disabled",
                "-Dexamples=disabled",
                "-Dpython=disabled",
                "-Dtoolkit_prefix=" + args.toolkit_prefix,
                "-Dcccl_include_dir=" + args.cccl_include_dir,
                "-Dcpp_link_args=" + link_args,
            ],
            env=env,
        )
        run(args.meson + ["compile", "-C", work, "streamlike"], env=env)
        library = work / "libstreamlike.so"
        if not library.is_file():
            raise Failure(f"the build made no {library}")
        needed = [line for line in run(["readelf", "-d", library]).splitlines() if "(NEEDED)" in line]
        dynamic_runtime = [line.strip() for line in needed if "libstdc++" in line]
        if dynamic_runtime:
            raise Failure(
                f"linked with {' '.join(STATIC_RUNTIME_LINK_ARGS)}, the library still needs the shared "
                "runtime, so this test would prove nothing:\n  " + "\n  ".join(dynamic_runtime)
            )
        full_table = subprocess.run(["nm", "--defined-only", str(library)], stdout=subprocess.PIPE, text=True).stdout
        if not any(line.endswith(" __cxa_throw") for line in full_table.splitlines()):
            raise Failure("the library's symbol table does not define __cxa_throw: the C++ runtime was not linked in")
    except Failure as e:
        print(f"FAIL: {e}")
        return 1
    problems, symbols = check_exports.check(library)
    if problems:
        print("FAIL (C++ runtime linked in statically): " + "\n".join(problems))
        return 1
    print(f"{library} exports {len(symbols)} symbols, all streamlike's, the required ones included")
    try:
        program_ran = build_and_run_program(args, work, library, env)
    except Failure as e:
        print(f"FAIL: {e}")
        return 1
    print(
        "PASS: with the C++ runtime linked in statically, the library exports streamlike's names only"
        + (f", and {Path(args.program).name} works against it" if program_ran else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
