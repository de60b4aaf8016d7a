#!/usr/bin/env python3
"""Builds the libFuzzer targets of test/fuzz/ with clang++ -fsanitize=fuzzer,address,undefined and
runs each for a bounded number of inputs, starting from the committed seed corpus.

Passes when every target finishes its runs with no crash, no broken contract (the targets trap)
and no sanitizer report. Exits 77 (meson's "skipped") when clang++ or libFuzzer is missing
(Debian: clang and libclang-rt-14-dev, which scripts/setup installs).

    test/fuzz/run.py                      build in build-fuzz/, 200000 runs per target
    test/fuzz/run.py --runs 2000000 --only dlpack_stream
    test/fuzz/run.py --only python_casters --python-runs 100000   # the Python casters, embedded

The Python target (python_casters.cpp) embeds this interpreter (--python) and needs its headers,
libpython and pybind11; it runs 3000 inputs by default (each makes a class), with
PYTHONMALLOC=malloc so that AddressSanitizer sees each Python object's bounds, and without leak
checking (the interpreter is never finalized).
Registered as the meson test 'fuzz-decoders' (suite 'fuzz') by test/fuzz/meson.build.
A failing input is saved as <build-dir>/artifacts/<target>-crash-<sha1>; replay it with
<build-dir>/fuzz_<target> <that file>.
"""

import argparse
import concurrent.futures
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SKIP = 77

# target name -> its sources (each target is one decoder of include/streamlike/stream_encodings.hpp)
TARGETS = {
    "cuda_stream_protocol": ["cuda_stream_protocol.cpp"],
    "dlpack_stream": ["dlpack_stream.cpp"],
    "cuda_array_interface_stream": ["cuda_array_interface_stream.cpp"],
    "from_address": ["from_address.cpp", "from_address_per_thread_tu.cpp"],
    # The Python casters in an embedded interpreter (needs Python's headers and libpython, and
    # pybind11's headers: python_flags()).
    "python_casters": ["python_casters.cpp"],
}
# Targets that embed Python: compiled with python_flags(); their inputs are longer (an object's
# description) and slower (a class made per input), so they run fewer of them; leak checking is
# off (the interpreter is never finalized, and keeps its interned objects).
PYTHON_TARGETS = {"python_casters"}
PYTHON_RUNS = int(os.environ.get("STREAMLIKE_FUZZ_PYTHON_RUNS", 3000))

SANITIZE = [
    "-fsanitize=fuzzer,address,undefined",
    # UBSan reports must stop the run (abort), not scroll by.
    "-fno-sanitize-recover=all",
]
RUNTIME_ENV = {
    "ASAN_OPTIONS": "halt_on_error=1:detect_leaks=1:print_stacktrace=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
}
# Words that mean a sanitizer or libFuzzer found something, even if the exit status said otherwise.
REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|contract violated|deadly signal")


def skip(reason):
    print(f"fuzz: SKIP: {reason}")
    sys.exit(SKIP)


def probe_libfuzzer(cxx, scratch):
    src = pathlib.Path(scratch) / "probe.cpp"
    src.write_text(
        "#include <cstddef>\n#include <cstdint>\n"
        'extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n'
    )
    result = subprocess.run(
        [cxx, *SANITIZE, str(src), "-o", str(pathlib.Path(scratch) / "probe")], capture_output=True, text=True
    )
    return result.returncode == 0, result.stderr.strip()


def python_flags(python):
    """(compile flags, link flags) to embed `python` and use pybind11's headers, or a reason why not."""
    probe = (
        "import sysconfig, pybind11, sys; v = sysconfig.get_config_var; "
        "print(sysconfig.get_paths()['include']); print(pybind11.get_include()); "
        "print(v('LIBDIR') or ''); print(v('LDLIBRARY') or ''); print(v('LDVERSION') or '')"
    )
    result = subprocess.run([python, "-c", probe], capture_output=True, text=True)
    if result.returncode != 0:
        return None, f"{python} cannot give Python's headers and pybind11's: {result.stderr.strip()[-300:]}"
    include, pybind11_include, libdir, ldlibrary, ldversion = (result.stdout.splitlines() + [""] * 5)[:5]
    if not pathlib.Path(include, "Python.h").is_file():
        return None, f"no Python.h in {include} (Debian: python3-dev)"
    if not libdir or not any(pathlib.Path(libdir).glob(f"libpython{ldversion}.*")):
        return None, f"no libpython{ldversion} in {libdir or '(no LIBDIR)'} to embed the interpreter"
    return (
        ["-isystem", include, "-isystem", pybind11_include],
        [f"-L{libdir}", f"-lpython{ldversion}", f"-Wl,-rpath,{libdir}", "-ldl", "-lm"],
    ), None


def build(cxx, target, sources, args, out):
    cmd = [
        cxx,
        "-std=c++20",
        "-g",
        "-O1",
        *SANITIZE,
        "-Wall",
        "-Wextra",
        "-Wpedantic",
        "-Werror",
        "-I",
        str(args.include),
        "-isystem",
        str(args.cuda_home / "include"),
    ]
    for d in args.cccl:
        cmd += ["-isystem", d]
    link = []
    if target in PYTHON_TARGETS:
        cmd += args.python_flags[0]
        # The casters call the library's out-of-line API (from_owned_stream and the rest).
        link = [str(args.library), f"-Wl,-rpath,{args.library.parent}", *args.python_flags[1]]
    cmd += [str(HERE / s) for s in sources]
    lib = args.cuda_home / "lib64"
    cmd += ["-o", str(out), f"-L{lib}", "-lcudart", f"-Wl,-rpath,{lib}", *link]
    start = time.monotonic()
    result = subprocess.run(cmd, capture_output=True, text=True)
    return result, time.monotonic() - start, cmd


def runs_of(target, args):
    return args.python_runs if target in PYTHON_TARGETS else args.runs


def run(target, exe, args):
    work = args.build_dir / "corpus-work" / target  # new inputs go here, never into the committed corpus
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    artifacts = args.build_dir / "artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    python = target in PYTHON_TARGETS
    cmd = [
        str(exe),
        str(work),
        str(HERE / "corpus" / target),
        f"-runs={runs_of(target, args)}",
        f"-max_len={512 if python else 32}",
        "-use_value_profile=1",
        "-timeout=20",
        "-error_exitcode=1",
        f"-artifact_prefix={artifacts}/{target}-",
        "-print_final_stats=1",
    ]
    if args.seed is not None:
        cmd.append(f"-seed={args.seed}")
    env = dict(os.environ, **RUNTIME_ENV)
    if python:
        env["ASAN_OPTIONS"] = env["ASAN_OPTIONS"].replace("detect_leaks=1", "detect_leaks=0")
        env["PYTHONMALLOC"] = "malloc"  # every Python object its own allocation: ASan sees its bounds
    start = time.monotonic()
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return result, time.monotonic() - start, cmd


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", type=pathlib.Path, default=ROOT / "build-fuzz")
    parser.add_argument(
        "--runs",
        type=int,
        default=int(os.environ.get("STREAMLIKE_FUZZ_RUNS", 200000)),
        help="inputs per target (default 200000, or $STREAMLIKE_FUZZ_RUNS)",
    )
    parser.add_argument("--seed", type=int, help="libFuzzer -seed (default: random, printed by libFuzzer)")
    parser.add_argument(
        "--python-runs",
        type=int,
        default=PYTHON_RUNS,
        help="inputs for the targets that embed Python (default 3000, or $STREAMLIKE_FUZZ_PYTHON_RUNS)",
    )
    parser.add_argument("--only", action="append", choices=sorted(TARGETS), help="run only this target (repeatable)")
    parser.add_argument(
        "--exclude", action="append", choices=sorted(TARGETS), default=[], help="do not run this target (repeatable)"
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="the Python whose headers and libpython the Python targets embed (default: this one)",
    )
    parser.add_argument("--cxx", default=os.environ.get("STREAMLIKE_FUZZ_CXX", "clang++"))
    parser.add_argument("--include", type=pathlib.Path, default=ROOT / "include")
    parser.add_argument(
        "--library",
        type=pathlib.Path,
        default=ROOT / "build" / "libstreamlike.so",
        help="the built libstreamlike.so the Python target links (default: build/)",
    )
    parser.add_argument(
        "--cuda-home", type=pathlib.Path, default=pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    )
    parser.add_argument(
        "--cccl",
        action="append",
        default=None,
        help="CCCL include folder(s), in order (default: <cuda-home>/include/cccl if present)",
    )
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # keep our lines in order with the children's under meson
    if args.cccl is None:
        default = args.cuda_home / "include" / "cccl"
        args.cccl = [str(default)] if default.is_dir() else []
    targets = {t: s for t, s in TARGETS.items() if (not args.only or t in args.only) and t not in args.exclude}

    cxx = shutil.which(args.cxx)
    if cxx is None:
        skip(f"{args.cxx} not found (Debian: apt-get install clang libclang-rt-14-dev, or scripts/setup)")
    with tempfile.TemporaryDirectory() as scratch:
        ok, why = probe_libfuzzer(cxx, scratch)
    if not ok:
        skip(f"{cxx} cannot link -fsanitize=fuzzer,address,undefined (Debian: libclang-rt-14-dev):\n{why}")

    if targets.keys() & PYTHON_TARGETS:
        args.python_flags, why = python_flags(args.python)
        if args.python_flags is not None and not args.library.is_file():
            args.python_flags, why = None, f"no {args.library} to link (build the library, or pass --library)"
        if args.python_flags is None:
            if not targets.keys() - PYTHON_TARGETS:
                skip(why)
            print(f"fuzz: not building {', '.join(sorted(targets.keys() & PYTHON_TARGETS))}: {why}")
            targets = {t: s for t, s in targets.items() if t not in PYTHON_TARGETS}

    # The seeds are generated from the table's edge values: a stale corpus is a failure.
    if subprocess.run([sys.executable, str(HERE / "make_corpus.py"), "--check"]).returncode != 0:
        return 1

    args.build_dir = args.build_dir.resolve()
    args.build_dir.mkdir(parents=True, exist_ok=True)
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        builds = {t: pool.submit(build, cxx, t, s, args, args.build_dir / f"fuzz_{t}") for t, s in targets.items()}
        for t, future in builds.items():
            result, seconds, cmd = future.result()
            print(f"fuzz: built fuzz_{t} in {seconds:.1f} s")
            if result.returncode != 0:
                print(" ".join(cmd) + "\n" + result.stdout + result.stderr)
                failed.append(f"{t} (build)")
    if failed:
        print("fuzz: FAILED: " + ", ".join(failed))
        return 1

    for t in targets:
        result, seconds, cmd = run(t, args.build_dir / f"fuzz_{t}", args)
        output = result.stdout + result.stderr
        done = re.search(r"Done (\d+) runs", output)
        cov = re.findall(r"cov: (\d+) ft: (\d+) corp: (\d+)", output)
        report = REPORT.search(output)
        if result.returncode != 0 or report or not done or int(done.group(1)) < runs_of(t, args):
            print(
                f"fuzz: FAIL {t}: exit status {result.returncode} after {seconds:.1f} s\n  {' '.join(cmd)}\n"
                + output[-8000:]
            )
            failed.append(t)
            continue
        cov_s = f"coverage {cov[-1][0]} edges, {cov[-1][1]} features, corpus {cov[-1][2]}" if cov else ""
        print(f"fuzz: ok   {t}: {done.group(1)} runs in {seconds:.1f} s, no crash, no sanitizer report ({cov_s})")
        for line in re.findall(r"^fuzz_\w+: .*$", output, re.MULTILINE):  # what a target says about its run
            print("      " + line)
    if failed:
        print("fuzz: FAILED: " + ", ".join(failed))
        return 1
    print(f"fuzz: all {len(targets)} targets passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
