#!/usr/bin/env python3
"""Keeps docs/bad-inputs.md in step with the tests that back it.

The document has two generated sections, each between marker comments:
  run-time bad inputs      rendered by test/bad_inputs/bad_inputs.cpp (`<program> --print-table`),
                           which also runs every row through the real API and checks the section
  compile-time bad inputs  rendered here from test/compile_fail/*.cpp: the guarded statement, the
                           file's "Promise:" and its `// expected-error-re:` diagnostics, which the
                           compile-fail suite checks against g++ and clang++

    bad_inputs.py --check                    exit 1 if the compile-time section is stale (a meson test)
    bad_inputs.py --write [--program PATH]   rewrite the compile-time section, and the run-time one
                                             from PATH (the built bad_inputs program) when given
"""

import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
DOC = ROOT / "docs" / "bad-inputs.md"
COMPILE_FAIL = ROOT / "test" / "compile_fail"

RUN_TIME = (
    "<!-- BEGIN GENERATED: run-time bad inputs (test/bad_inputs/bad_inputs.cpp) -->",
    "<!-- END GENERATED: run-time bad inputs -->",
)
COMPILE_TIME = (
    "<!-- BEGIN GENERATED: compile-time bad inputs (test/bad_inputs/bad_inputs.py) -->",
    "<!-- END GENERATED: compile-time bad inputs -->",
)

# A directive may name the compilers it holds for: `// expected-error-re(nvcc): ...` (check.py).
DIRECTIVE = re.compile(r"^\s*//\s*expected-error-re(?:\(([^)]*)\))?:\s*(.*?)\s*$")
UNEXPECTED = re.compile(r"^\s*//\s*unexpected-error-re(?:\(([^)]*)\))?:\s*(.*?)\s*$")
FLAGS = re.compile(r"^\s*//\s*compile-flags:")
GUARD_BEGIN = re.compile(r"^\s*#\s*ifndef\s+STREAMLIKE_COMPILE_FAIL_CONTROL\b")
GUARD_END = re.compile(r"^\s*#\s*endif\b")
GUARD_ELSE = re.compile(r"^\s*#\s*(else|elif)\b")
VOID_USE = re.compile(r"^\(void\)\s*\w+;$")  # `(void)x;` only silences a warning: not part of the bad input


def code(text):
    return "`" + text.replace("|", "\\|") + "`"


def pattern(match):
    """A directive's pattern, with the compilers it is limited to, if any: (pattern, "nvcc" or "")."""
    return match.group(2), (match.group(1) or "").replace(",", ", ")


def describe(path):
    """(bad code, promise, expected diagnostics, unexpected diagnostics) of one compile-fail source."""
    lines = path.read_text(encoding="utf-8").splitlines()
    comment = []
    for line in lines:
        stripped = line.strip()
        if not stripped.startswith("//") or DIRECTIVE.match(line) or UNEXPECTED.match(line) or FLAGS.match(line):
            break
        comment.append(stripped[2:].strip())
    promise = " ".join(comment)
    promise = re.sub(r"^Promise:\s*", "", promise)
    # Its first sentence (a period before a space or the end, not the one of "e.g." or "i.e.").
    first = re.search(r"^.*?(?<!\be\.g)(?<!\bi\.e)\.(?=\s|$)", promise)
    promise = first.group(0) if first else promise
    expected = [pattern(m) for m in map(DIRECTIVE.match, lines) if m]
    unexpected = [pattern(m) for m in map(UNEXPECTED.match, lines) if m]
    guarded, inside = [], False
    for line in lines:
        if GUARD_BEGIN.match(line):
            inside = True
        elif inside and (GUARD_END.match(line) or GUARD_ELSE.match(line)):  # #else: the control code
            inside = False
        elif inside and line.strip() and not line.strip().startswith("//") and not VOID_USE.match(line.strip()):
            guarded.append(line.strip())
    if not guarded:
        raise SystemExit(f"bad_inputs.py: {path} has no statement guarded by #ifndef STREAMLIKE_COMPILE_FAIL_CONTROL")
    if not expected:
        raise SystemExit(f"bad_inputs.py: {path} has no // expected-error-re: line")
    return " ".join(guarded), promise, expected, unexpected


def shown(directive):
    regex, compilers = directive
    return code(regex) + (f" ({compilers})" if compilers else "")


def render_compile_time():
    out = [
        "Each source below is compiled by the `compile-fail` suite (test/compile_fail/check.py) with g++",
        "and clang++, and those a .cu file meets most with nvcc too: it must fail, with diagnostics matching",
        "every pattern shown (a pattern marked with compilers holds for those only) and none of those it",
        "must not match (an ambiguity, say, which would also fail to compile but for another reason), and",
        "compile cleanly without the offending code.",
        "",
        "| source | offending code | promise | diagnostics match | and do not match |",
        "|---|---|---|---|---|",
    ]
    for path in sorted(COMPILE_FAIL.glob("*.cpp")):
        bad, promise, expected, unexpected = describe(path)
        out.append(
            f"| {code('test/compile_fail/' + path.name)} | {code(bad)} | {promise.replace('|', chr(92) + '|')} | "
            + " and ".join(shown(e) for e in expected)
            + " | "
            + (" nor ".join(shown(u) for u in unexpected) or "-")
            + " |"
        )
    return "\n".join(out) + "\n"


def split(text, markers):
    """(before, section, after) around the marker lines."""
    begin, end = markers
    lines = text.splitlines(keepends=True)
    try:
        b = next(i for i, line in enumerate(lines) if line.rstrip("\n") == begin)
        e = next(i for i, line in enumerate(lines) if line.rstrip("\n") == end and i > b)
    except StopIteration:
        raise SystemExit(f"bad_inputs.py: {DOC} lacks the marker lines:\n  {begin}\n  {end}") from None
    return "".join(lines[: b + 1]), "".join(lines[b + 1 : e]), "".join(lines[e:])


def first_difference(have, want):
    h, w = have.splitlines(), want.splitlines()
    for i in range(max(len(h), len(w))):
        a = h[i] if i < len(h) else "(end)"
        b = w[i] if i < len(w) else "(end)"
        if a != b:
            return f"line {i + 1} of the section:\n  document: {a}\n  sources:  {b}"
    return "?"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true")
    action.add_argument("--write", action="store_true")
    parser.add_argument("--program", type=pathlib.Path, help="the built bad_inputs program (for --write)")
    args = parser.parse_args()

    text = DOC.read_text(encoding="utf-8")
    compile_time = render_compile_time()
    if args.check:
        _, have, _ = split(text, COMPILE_TIME)
        if have != compile_time:
            print(
                f"bad_inputs.py: {DOC.relative_to(ROOT)} is stale at {first_difference(have, compile_time)}\n"
                "Regenerate: test/bad_inputs/bad_inputs.py --write --program <build>/test/bad_inputs/bad_inputs"
            )
            return 1
        print(
            f"bad_inputs.py: the compile-time section lists all {len(list(COMPILE_FAIL.glob('*.cpp')))} "
            "test/compile_fail/*.cpp, as they are"
        )
        return 0

    before, _, after = split(text, COMPILE_TIME)
    text = before + compile_time + after
    if args.program:
        run_time = subprocess.run(
            [str(args.program), "--print-table"], check=True, capture_output=True, text=True
        ).stdout
        before, _, after = split(text, RUN_TIME)
        text = before + run_time + after
    DOC.write_text(text, encoding="utf-8")
    print(f"bad_inputs.py: wrote {DOC.relative_to(ROOT)}" + ("" if args.program else " (compile-time section only)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
