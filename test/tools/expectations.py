"""How a test script of many expectations reports (docs/developing.md, "Test scripts"): each expectation on a line
of its own, `ok:   WHAT` or `FAIL: WHAT` followed by the output that failed it, and a closing line
`NAME: N failed`; the exit status is 1 when any failed.

    from expectations import expect, finish
    expect("a route over 1.02 fails", rc == 1, out)
    finish("ratios_test")
"""

import sys

failures = 0


def expect(what, ok, output=""):
    global failures
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures += 1
        print("  output was:\n    " + output.strip().replace("\n", "\n    "))


def finish(name):
    print(f"{name}: {failures} failed")
    sys.exit(1 if failures else 0)
