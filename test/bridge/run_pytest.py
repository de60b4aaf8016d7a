#!/usr/bin/env python3
"""Runs pytest on the given test files for `meson test`, with meson's exit codes.

Usage: run_pytest.py [--skip-if-nothing-ran] TEST_FILE... [-- PYTEST_ARGS...]

Exit status: 0 every test passed; 1 a test failed, or pytest collected nothing (its exit code 5:
a file that defines no test is a broken test, not a pass); pytest's own code for its other
failures (2 interrupted, 3 internal error, 4 usage error); 77 (meson's SKIP) when pytest is not
installed, or with --skip-if-nothing-ran when no test passed or failed because all were skipped,
at collection or when run (the GPU file on a machine without a GPU).
"""

import os
import sys

SKIP = 77
NO_TESTS_COLLECTED = 5


class Outcomes:
    """Counts what pytest reports, to tell "all skipped" from "all passed"."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.skipped = 0

    def pytest_collectreport(self, report):
        if report.skipped:  # a whole file skipped at import (pytest.skip(allow_module_level=True))
            self.skipped += 1

    def pytest_runtest_logreport(self, report):
        if report.skipped:
            self.skipped += 1
        elif report.failed:
            self.failed += 1
        elif report.when == "call" and report.passed:
            self.passed += 1


def main(argv):
    skip_if_nothing_ran = "--skip-if-nothing-ran" in argv
    argv = [a for a in argv if a != "--skip-if-nothing-ran"]
    if "--" in argv:
        split = argv.index("--")
        files, extra = argv[:split], argv[split + 1 :]
    else:
        files, extra = argv, []
    if not files:
        print("run_pytest.py: no test file given", file=sys.stderr)
        return 1
    try:
        import pytest
    except ImportError:
        print(f"run_pytest.py: pytest is not installed for {sys.executable} (pip install pytest): skipped")
        return SKIP

    here = os.path.dirname(os.path.abspath(__file__))
    outcomes = Outcomes()
    # No cache folder in the source tree; the test files' folder is the root (its conftest.py).
    code = pytest.main(["-p", "no:cacheprovider", "-ra", "-v", f"--rootdir={here}", *files, *extra], plugins=[outcomes])
    if code == NO_TESTS_COLLECTED and skip_if_nothing_ran and outcomes.skipped > 0:
        print(f"run_pytest.py: skipped as a whole ({outcomes.skipped} skip(s) at collection): reporting SKIP")
        return SKIP
    if code == NO_TESTS_COLLECTED:
        print("run_pytest.py: pytest collected no tests: that is a failure", file=sys.stderr)
        return 1
    if code != 0:
        return int(code)
    if skip_if_nothing_ran and outcomes.passed == 0 and outcomes.failed == 0:
        print(f"run_pytest.py: all {outcomes.skipped} test(s) skipped: reporting SKIP")
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
