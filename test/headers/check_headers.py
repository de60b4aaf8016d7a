#!/usr/bin/env python3
"""Every public header include/streamlike/*.hpp must compile on its own, warning-free.

Usage:
  check_headers.py --kind {gcc,clang,nvcc} --compiler PATH --include DIR
                   [--system-include DIR ...] [--cccl DIR ...] [--newer-cccl DIR] [--jobs N]
                   [--headers GLOB ...]

The headers are globbed when the test runs, so a new header is checked without editing the
build. By default only include/streamlike/*.hpp: subfolders (adapters/, python/, detail/) need
third-party headers or are not meant to stand alone. --headers (relative to --include, repeatable)
checks others instead, e.g. the Python bridge's with Python's headers as --system-include
(test/bridge/meson.build). For each header a translation unit that includes only that header (twice,
which also checks its include guard) is compiled:
  gcc/clang: as .cpp, -std=c++20 -Wall -Wextra -Wpedantic -Werror -fsyntax-only;
  nvcc:      as .cu,  -std=c++20 -Xcompiler=-Wall,-Wextra,-Wpedantic, full compile (-c).
nvcc's own generated code makes the host compiler warn "style of line directive is a GCC
extension" under -Wpedantic (why meson drops -Wpedantic for nvcc, mesonbuild/meson#12912), and
nvcc's `-Werror all-warnings` would turn that into a host error too, so for nvcc no -Werror is
used: the output is captured and any warning line other than that one fails the header.

Each header is compiled against the toolkit's CCCL (--cccl) and, when a newer CCCL is given
(--newer-cccl, or the STREAMLIKE_NEWER_CCCL environment variable when the option is absent),
again with that one first on the include path. A probe first checks which CCCL_VERSION each
variant really sees, so a newer CCCL shadowed by the toolkit's cannot pass unnoticed.

Exit status: 0 all compiled, 1 a header failed, 77 the compiler is absent (skip).
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHOWN_LINES = 30
TIMEOUT_S = 300
# The one warning nvcc's generated code provokes under host -Wpedantic (see the docstring).
NVCC_ALLOWED_WARNING = re.compile(r"style of line directive is a GCC extension")
WARNING_LINE = re.compile(r"\bwarning\b", re.IGNORECASE)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", choices=["gcc", "clang", "nvcc"], required=True)
    p.add_argument("--compiler", required=True, help="compiler executable (name or path)")
    p.add_argument("--include", required=True, help="the project's include/ folder")
    p.add_argument("--system-include", action="append", default=[], help="e.g. the toolkit's include/")
    p.add_argument("--cccl", action="append", default=[], help="the toolkit's CCCL include folders")
    p.add_argument("--newer-cccl", default=None, help="a newer CCCL's include folder (default: $STREAMLIKE_NEWER_CCCL)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument(
        "--headers", action="append", default=[], help="a glob relative to --include (default: streamlike/*.hpp)"
    )
    args = p.parse_args(argv)
    if args.newer_cccl is None:
        args.newer_cccl = os.environ.get("STREAMLIKE_NEWER_CCCL", "")
    return args


def run(cmd, cwd):
    # C locale: untranslated diagnostics, so the warning filter sees the words it looks for.
    env = dict(os.environ, LC_ALL="C", LANG="C")
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {TIMEOUT_S} s"
    return proc.returncode, proc.stdout


class Compiler:
    def __init__(self, args, cccl_dirs):
        self.kind = args.kind
        self.exe = args.compiler
        self.include_flags = ["-I", args.include]
        for d in args.system_include + cccl_dirs:
            self.include_flags += ["-isystem", d]

    @property
    def suffix(self):
        return ".cu" if self.kind == "nvcc" else ".cpp"

    def compile_command(self, source, workdir):
        if self.kind == "nvcc":
            obj = str(Path(workdir) / (Path(source).stem + ".o"))
            return [
                self.exe,
                "-std=c++20",
                "-Xcompiler=-Wall,-Wextra,-Wpedantic",
                *self.include_flags,
                "-c",
                source,
                "-o",
                obj,
            ]
        return [
            self.exe,
            "-std=c++20",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Werror",
            "-fsyntax-only",
            "-fdiagnostics-color=never",
            *self.include_flags,
            source,
        ]

    def preprocess_command(self, source):
        return [self.exe, "-std=c++20", *self.include_flags, "-E", source]

    def problems(self, rc, output):
        """Lines that make this compile a failure ([] when it is clean)."""
        lines = output.splitlines()
        if self.kind != "nvcc":
            return [] if rc == 0 else (lines or [f"exit status {rc}, no output"])
        bad = [line for line in lines if WARNING_LINE.search(line) and not NVCC_ALLOWED_WARNING.search(line)]
        if rc != 0:
            errors = [line for line in lines if re.search(r"\berror\b", line)]
            return (errors + bad) or lines or [f"exit status {rc}, no output"]
        return bad


def probe_cccl_version(compiler, workdir, tag):
    src = Path(workdir) / f"probe_{tag}{compiler.suffix}"
    src.write_text("#include <cuda/version>\nstreamlike_probe_cccl_version = CCCL_VERSION;\n")
    rc, output = run(compiler.preprocess_command(str(src)), workdir)
    # Drop line markers: g++ may put the macro's expansion on a line of its own.
    text = "\n".join(line for line in output.splitlines() if not line.lstrip().startswith("#"))
    m = re.search(r"streamlike_probe_cccl_version\s*=\s*(\d+)", text)
    if rc != 0 or not m:
        print(f"FAIL cannot find CCCL_VERSION through <cuda/version> ({tag}):")
        print("\n".join(output.splitlines()[:SHOWN_LINES]))
        return None
    return int(m.group(1))


def check_header(compiler, header, rel, workdir, tag):
    stem = rel.replace("/", "_").removesuffix(".hpp")
    src = Path(workdir) / f"{tag}_{stem}{compiler.suffix}"
    src.write_text(
        f"// Generated: <{rel}> must compile on its own (twice: the include guard).\n"
        f"#include <{rel}>\n#include <{rel}>\n"
    )
    cmd = compiler.compile_command(str(src), workdir)
    start = time.monotonic()
    rc, output = run(cmd, workdir)
    return rel, tag, cmd, compiler.problems(rc, output), time.monotonic() - start


def main(argv):
    args = parse_args(argv)
    exe = shutil.which(args.compiler)
    if exe is None:
        print(f"SKIP {args.compiler} not found")
        return 77
    args.compiler = exe

    patterns = args.headers or ["streamlike/*.hpp"]
    headers = sorted({p for pattern in patterns for p in Path(args.include).glob(pattern) if p.is_file()})
    if not headers:
        print(f"FAIL no headers match {patterns} under {args.include}")
        return 1

    variants = [("toolkit-cccl", args.cccl)]
    if args.newer_cccl:
        if not Path(args.newer_cccl, "cuda").is_dir():
            print(f"FAIL newer CCCL {args.newer_cccl!r} has no cuda/ folder")
            return 1
        variants.append(("newer-cccl", [args.newer_cccl] + args.cccl))

    failed = 0
    with tempfile.TemporaryDirectory(prefix="streamlike_headers_") as workdir:
        versions = {}
        for tag, dirs in variants:
            versions[tag] = probe_cccl_version(Compiler(args, dirs), workdir, tag)
            if versions[tag] is None:
                return 1
        print(
            f"{args.kind} ({exe}): {len(headers)} headers; "
            + ", ".join(f"{tag} CCCL_VERSION {v}" for tag, v in versions.items())
        )
        if "newer-cccl" in versions and versions["newer-cccl"] == versions["toolkit-cccl"]:
            print(
                f"FAIL the newer CCCL {args.newer_cccl} is shadowed: both variants see CCCL_VERSION "
                f"{versions['toolkit-cccl']}"
            )
            return 1

        jobs = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for tag, dirs in variants:
                compiler = Compiler(args, dirs)
                for h in headers:
                    rel = h.relative_to(args.include).as_posix()
                    jobs.append(pool.submit(check_header, compiler, h, rel, workdir, tag))
            for job in jobs:  # in submission order, so the log reads the same every run
                rel, tag, cmd, problems, seconds = job.result()
                if problems:
                    failed += 1
                    print(f"FAIL {rel} [{tag}] ({seconds:.1f} s)\n  command: {' '.join(cmd)}")
                    shown = min(SHOWN_LINES, len(problems))
                    print(f"--- {shown} of {len(problems)} problem lines ---")
                    print("\n".join(problems[:SHOWN_LINES]))
                    print("---")
                else:
                    print(f"ok   {rel} [{tag}] ({seconds:.1f} s)")

    total = len(jobs)
    print(f"{args.kind}: {total - failed} of {total} header compiles clean, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
