#!/usr/bin/env python3
"""Counts meson's test results (testlog.json, one JSON object per test) into the closing line, and
checks that every suite that must run on CI ran.

Usage: count_results.py [--require NAME[,NAME...]]... [LABEL=]TESTLOG...

A TESTLOG given as LABEL=PATH (a sanitizer build's log: asan=build-asan/meson-logs/testlog.json)
counts its tests under the suite LABEL as well as under their own suites.

--require NAME: at least one test of suite NAME passed (a suite that silently stopped running, or
whose tests all skipped, fails the count and is named). NAME may be SUITE/TEST, for a suite whose
other tests would pass without the one that matters (python/python-bridge: the bridge itself, not
the header checks that share its suite).

The closing line `N passed, N failed, N skipped` is always the last line printed (on stdout).
Exit status 1 on any failed test, an unreadable log, no pass at all, or a required suite without
a pass.
"""
import json
import sys

PASSED = {"OK", "EXPECTEDFAIL"}
SKIPPED = {"SKIP"}


def parse_name(full):
    """meson names a result `SUITE[+SUITE...] - PROJECT:TEST` (the project's own suites, without
    the `PROJECT:` prefix that meson's --suite also accepts)."""
    suites, sep, rest = full.partition(" - ")
    if not sep:
        return [], full
    test = rest.split(":", 1)[1] if ":" in rest else rest
    return [s for s in suites.split("+") if s], test


def main(argv):
    required, logs = [], []
    args = iter(argv)
    for arg in args:
        if arg == "--require":
            value = next(args, None)
            if value is None:
                print("count_results: --require needs a suite name")
                return 2
            required += [name for name in value.split(",") if name]
        elif arg.startswith("--require="):
            required += [name for name in arg.split("=", 1)[1].split(",") if name]
        else:
            label, sep, path = arg.partition("=")
            logs.append((label, path) if sep else (None, arg))

    passed = failed = skipped = 0
    # (suite, test) of every passing and of every skipped test, to name what did not run.
    passes, skips = set(), {}
    problems = []
    for label, path in logs:
        try:
            lines = open(path, encoding="utf-8").read().splitlines()
        except OSError as e:
            problems.append(f"cannot read {path}: {e}")
            failed += 1
            continue
        for line in lines:
            if not line.strip():
                continue
            entry = json.loads(line)
            result = entry["result"]
            suites, test = parse_name(entry["name"])
            if label:
                suites = suites + [label]
            if result in PASSED:
                passed += 1
                passes.update((s, test) for s in suites)
            elif result in SKIPPED:
                skipped += 1
                for s in suites:
                    skips.setdefault(s, []).append(test)
            else:
                failed += 1

    for name in required:
        suite, _, test = name.partition("/")
        if any(s == suite and (not test or t == test) for s, t in passes):
            continue
        what = f"test {test} of suite {suite}" if test else f"suite {suite}"
        skipped_here = [t for t in skips.get(suite, []) if not test or t == test]
        if skipped_here:
            problems.append(f"{what} must run on CI, but it only skipped ({', '.join(sorted(set(skipped_here)))}; "
                            "see its log for why)")
        else:
            problems.append(f"{what} must run on CI, but no test of it ran (not built, not registered, or "
                            "its log is missing)")
    if passed == 0:
        problems.append("no test passed")

    for problem in problems:
        print(f"count_results: FAIL {problem}")
    if required and not problems:
        print(f"count_results: every required suite passed at least once: {', '.join(required)}")
    sys.stdout.flush()
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
