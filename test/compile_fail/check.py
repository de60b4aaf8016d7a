#!/usr/bin/env python3
"""Checks that one compile-fail source fails to compile, for the reason it names.

Usage: check.py SOURCE -- COMPILER [ARGS...]
       check.py --registered DIR NAME...   (every DIR/*.cpp is one of NAME...: none is forgotten)

SOURCE carries one or more lines `// expected-error-re: REGEX` (each must match the compiler's
diagnostics) and optionally `// unexpected-error-re: REGEX` (must not match), and wraps the
offending statement in `#ifndef STREAMLIKE_COMPILE_FAIL_CONTROL ... #endif`. A directive may name
the compilers it holds for, `// expected-error-re(g++,clang++): REGEX`, where they word a refusal
differently; the compiler is told by the words of COMMAND before its first option (nvcc, clang..., else
g++; a launcher such as ccache may come first). A line
`// compile-flags: FLAG...` adds flags after ARGS (a later -std= wins). The source is compiled
twice, with -fsyntax-only (nvcc, which has none: -x cu -c -o /dev/null):
  1. as is: the compile must fail and every expected regex must match;
  2. with -DSTREAMLIKE_COMPILE_FAIL_CONTROL: it must compile cleanly (with -Werror), which proves
     that the failure comes from the guarded statement, not from a typo elsewhere.
Exit status 0 on success, 1 on any mismatch (with the first 30 lines of diagnostics).
"""

import os
import re
import subprocess
import sys

CONTROL = "STREAMLIKE_COMPILE_FAIL_CONTROL"
DIRECTIVE = re.compile(r"^\s*//\s*(expected|unexpected)-error-re(?:\(([^)]*)\))?:\s*(.*?)\s*$")
FLAGS = re.compile(r"^\s*//\s*compile-flags:\s*(.*?)\s*$")
SHOWN_LINES = 30


def fail(name, why, output=None):
    print(f"FAIL {name}: {why}")
    if output is not None:
        lines = output.splitlines()
        shown = min(SHOWN_LINES, len(lines))
        print(f"--- diagnostics ({shown} of {len(lines)} lines) ---")
        print("\n".join(lines[:SHOWN_LINES]))
        print("---")
    sys.exit(1)


def compiler_kind(command):
    # The words before the first option: the compiler, after any launcher (ccache nvcc ...).
    names = [
        os.path.basename(word)
        for word in command[: next((i for i, w in enumerate(command) if w.startswith("-")), len(command))]
    ]
    return "nvcc" if any("nvcc" in n for n in names) else "clang++" if any("clang" in n for n in names) else "g++"


def compile_source(command, source, extra):
    # C locale: untranslated messages with ASCII quotes, so the regexes see what they were written for.
    env = dict(os.environ, LC_ALL="C", LANG="C")
    if compiler_kind(command) == "nvcc":
        cmd = command + ["-x", "cu", "-c", "-o", os.devnull] + extra + [source]
    else:
        cmd = command + ["-fsyntax-only", "-fdiagnostics-color=never"] + extra + [source]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=300)
    except subprocess.TimeoutExpired:
        return None, "compiler timed out after 300 s", cmd
    return proc.returncode, proc.stdout, cmd


def check_registered(folder, names):
    # meson has no glob: a source missing from meson.build's list would silently never run.
    on_disk = {os.path.splitext(f)[0] for f in os.listdir(folder) if f.endswith(".cpp")}
    missing, stale = sorted(on_disk - set(names)), sorted(set(names) - on_disk)
    if missing or stale:
        print(f"FAIL compile-fail sources not in meson.build: {missing}; listed but absent: {stale}")
        return 1
    print(f"PASS all {len(on_disk)} compile-fail sources are registered")
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "--registered":
        return check_registered(argv[2], argv[3:])
    if "--" not in argv or argv.index("--") != 2 or len(argv) < 4:
        print(__doc__)
        return 2
    source = argv[1]
    command = argv[3:]
    name = os.path.basename(source)
    kind = compiler_kind(command)

    with open(source, encoding="utf-8") as f:
        text = f.read()
    expected, unexpected, flags = [], [], []
    for line in text.splitlines():
        m = DIRECTIVE.match(line)
        if m:
            compilers = [c.strip() for c in m.group(2).split(",")] if m.group(2) else [kind]
            if kind in compilers:
                (expected if m.group(1) == "expected" else unexpected).append(re.compile(m.group(3)))
        m = FLAGS.match(line)
        if m:
            flags += m.group(1).split()
    if not expected:
        fail(name, f"no `// expected-error-re: REGEX` line for {kind}: say why this source must not compile")
    if f"#ifndef {CONTROL}" not in text:
        fail(name, f"the offending statement is not wrapped in `#ifndef {CONTROL}`")

    rc, output, cmd = compile_source(command, source, flags)
    if rc is None:
        fail(name, output)
    if rc == 0:
        fail(name, "compiled, but must not compile\n  command: " + " ".join(cmd), output)
    for regex in expected:
        if not regex.search(output):
            fail(name, f"failed to compile, but not for the expected reason: no match for /{regex.pattern}/", output)
    for regex in unexpected:
        m = regex.search(output)
        if m:
            fail(
                name,
                f"failed to compile, but the diagnostics match the unexpected /{regex.pattern}/ (at: {m.group(0)!r})",
                output,
            )

    werror = ["-Werror", "all-warnings", "-Xcompiler=-Werror"] if kind == "nvcc" else ["-Werror"]
    rc, output, cmd = compile_source(command, source, flags + [f"-D{CONTROL}"] + werror)
    if rc is None:
        fail(name, output)
    if rc != 0:
        fail(
            name,
            f"the control build (-D{CONTROL}) must compile cleanly but did not; the failure above "
            "may come from some other line\n  command: " + " ".join(cmd),
            output,
        )

    print(
        f"PASS {name}: refused with " + ", ".join(f"/{r.pattern}/" for r in expected) + f"; compiles with -D{CONTROL}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
