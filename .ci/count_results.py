#!/usr/bin/env python3
"""Counts meson's test results (testlog.json, one JSON object per test) into the closing line."""
import json
import sys

PASSED = {"OK", "EXPECTEDFAIL"}
SKIPPED = {"SKIP"}

def main(paths):
    passed = failed = skipped = 0
    for path in paths:
        try:
            lines = open(path, encoding="utf-8").read().splitlines()
        except OSError as e:
            print(f"count_results: cannot read {path}: {e}", file=sys.stderr)
            failed += 1
            continue
        for line in lines:
            if not line.strip():
                continue
            result = json.loads(line)["result"]
            if result in PASSED:
                passed += 1
            elif result in SKIPPED:
                skipped += 1
            else:
                failed += 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or passed == 0 else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
