#!/usr/bin/env python3
"""Counts meson's test results (testlog.json, one JSON object per test) into the closing line, and
checks that every suite that must run on CI ran.

Usage: count_results.py [--require NAME[,NAME...]]... [--registered TESTS_JSON]
                        [--may-skip PATTERN[,PATTERN...]]... [--require-all LABEL/SUITE[,...]]...
                        [LABEL=]TESTLOG...

A TESTLOG given as LABEL=PATH (a sanitizer build's log: asan=build-asan/meson-logs/testlog.json)
counts its tests under the suite LABEL as well as under their own suites.

--require NAME: at least one test of suite NAME passed (a suite that silently stopped running, or
whose tests all skipped, fails the count and is named). NAME may be SUITE/TEST, for a suite whose
other tests would pass without the one that matters (bridge/python-bridge: the bridge itself, not
the header checks that share its suite).

--registered TESTS_JSON: the tests the build registered (`meson introspect BUILD --tests`). Every
one of them must have passed in the unlabelled logs, unless --may-skip exempts it: a registered test
that skipped or is missing from the logs fails the count and is named (with the last line it printed,
for a skip). So a test that stops running, or starts skipping because a tool went missing, fails CI
without anyone having listed it.

--require-all LABEL/SUITE: every registered test of SUITE (less those --may-skip exempts) passed in
the log labelled LABEL, not just one: asan/host requires each host test under AddressSanitizer, so
a host test that stops running (or skips) under a sanitizer fails the count and is named. Needs
--registered.

--may-skip PATTERN: tests that may skip or be absent (the ones that need a GPU, or an optional
library CI does not install). A PATTERN (shell-style, fnmatch) exempts a test when it matches one of
the test's suites, its name, or SUITE/NAME.

The closing line `N passed, N failed, N skipped` is always the last line printed (on stdout).
Exit status 1 on any failed test, an unreadable log, no pass at all, a required suite without
a pass, or a registered test that did not pass and is not exempt.
"""

import fnmatch
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


def exempt(test, suites, patterns):
    """True if one of `patterns` matches a suite of the test, its name, or SUITE/NAME."""
    for pattern in patterns:
        if fnmatch.fnmatchcase(test, pattern):
            return True
        for suite in suites:
            if fnmatch.fnmatchcase(suite, pattern) or fnmatch.fnmatchcase(f"{suite}/{test}", pattern):
                return True
    return False


def registered_tests(path):
    """[(test, [suite...])] of `meson introspect --tests` output (suites without `PROJECT:`)."""
    with open(path, encoding="utf-8") as f:
        entries = json.load(f)
    return [(e["name"], [s.split(":", 1)[-1] for s in e.get("suite", [])]) for e in entries]


def last_line(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else "it printed nothing"


def main(argv):
    required, logs, may_skip, registered_path, require_all = [], [], [], None, []
    args = iter(argv)
    for arg in args:
        option, eq, inline = arg.partition("=")
        if option in ("--require", "--may-skip", "--registered", "--require-all"):
            value = inline if eq else next(args, None)
            if value is None:
                print(f"count_results: {option} needs a value")
                return 2
            if option == "--require":
                required += [name for name in value.split(",") if name]
            elif option == "--may-skip":
                may_skip += [name for name in value.split(",") if name]
            elif option == "--require-all":
                require_all += [name for name in value.split(",") if name]
            else:
                registered_path = value
        else:
            label, sep, path = arg.partition("=")
            logs.append((label, path) if sep else (None, arg))

    passed = failed = skipped = 0
    # (suite, test) of every passing and of every skipped test, to name what did not run.
    passes, skips = set(), {}
    # Of the unlabelled logs (the build's own): test -> results, and the skipped tests' last lines.
    results, skip_lines = {}, {}
    # Of each labelled log: label -> test -> results.
    labelled = {}
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
            if not label:
                results.setdefault(test, []).append(result)
                if result in SKIPPED:
                    skip_lines[test] = last_line(entry.get("stdout"))
            if label:
                labelled.setdefault(label, {}).setdefault(test, []).append(result)
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
            problems.append(
                f"{what} must run on CI, but it only skipped ({', '.join(sorted(set(skipped_here)))}; "
                "see its log for why)"
            )
        else:
            problems.append(
                f"{what} must run on CI, but no test of it ran (not built, not registered, or its log is missing)"
            )
    if registered_path is not None:
        try:
            registered = registered_tests(registered_path)
        except (OSError, ValueError, KeyError, TypeError) as e:
            problems.append(f"cannot read the registered tests {registered_path}: {e}")
            registered = []
        exempted = 0
        for test, suites in registered:
            if exempt(test, suites, may_skip):
                exempted += 1
                continue
            got = results.get(test, [])
            if any(r in PASSED for r in got):
                continue
            what = f"test {test} (suite {'+'.join(suites) or 'none'})"
            if any(r in SKIPPED for r in got):
                problems.append(f"{what} must pass on CI, but it skipped: {skip_lines.get(test)}")
            elif not got:
                problems.append(f"{what} must pass on CI, but it is missing from the log (not run)")
        if not problems:
            print(
                f"count_results: every registered test passed, less {exempted} that may skip "
                f"({', '.join(may_skip) or 'none listed'})"
            )
    if require_all and registered_path is None:
        problems.append("--require-all needs --registered (the tests each labelled log must hold)")
    for name in require_all if registered_path is not None else []:
        label, _, suite = name.partition("/")
        got_by_test = labelled.get(label, {})
        wanted = [test for test, suites in registered if suite in suites and not exempt(test, suites, may_skip)]
        if not wanted:
            problems.append(f"--require-all {name}: no registered test of suite {suite} is required")
        for test in wanted:
            got = got_by_test.get(test, [])
            if any(r in PASSED for r in got):
                continue
            how = "it skipped" if any(r in SKIPPED for r in got) else "it is missing from that log (not run)"
            problems.append(f"test {test} (suite {suite}) must pass under {label} on CI, but {how}")
        if wanted and all(any(r in PASSED for r in got_by_test.get(t, [])) for t in wanted):
            print(f"count_results: every {suite} test ({len(wanted)}) passed under {label}")
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
