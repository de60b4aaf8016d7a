#!/usr/bin/env python3
"""Compiles c_header.c (which includes <streamlike/c/owned_stream.h>) as C99 and as C11 with
-Wall -Wextra -Wpedantic -Werror under one C compiler, and runs each program.

Usage: c_header_test.py --compiler CC --include DIR --source FILE --work DIR
Exit status: 0 clean and passing, 1 a warning, an error or a failed run, 77 no such compiler.
"""

import argparse
import os
import shutil
import subprocess
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--compiler", required=True)
    p.add_argument("--include", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--work", required=True)
    args = p.parse_args()
    cc = shutil.which(args.compiler)
    if cc is None:
        print(f"SKIP {args.compiler} not found")
        return 77
    os.makedirs(args.work, exist_ok=True)
    failed = False
    for std in ["c99", "c11"]:
        exe = os.path.join(args.work, f"c_header_{std}")
        cmd = [
            cc,
            f"-std={std}",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Werror",
            "-I",
            args.include,
            args.source,
            "-o",
            exe,
        ]
        print(" ".join(cmd))
        built = subprocess.run(cmd, capture_output=True, text=True)
        if built.returncode != 0 or built.stderr.strip():
            print(f"FAIL {std}: compile\n{built.stdout}{built.stderr}")
            failed = True
            continue
        ran = subprocess.run([exe], capture_output=True, text=True)
        print(f"{std}: {ran.stdout.strip()}")
        if ran.returncode != 0:
            print(f"FAIL {std}: run\n{ran.stderr}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
