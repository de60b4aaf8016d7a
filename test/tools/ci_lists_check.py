#!/usr/bin/env python3
""".ci/run's lists pinned: what CI requires (required, require_all) and what it lets skip (may_skip)
are read from the script and compared with the lists below, so that a test exempted, or a suite no
longer required, is a visible change to this file too, not a quiet edit of CI. Also checks that
.ci/run hands all three lists to .ci/count_results.py.

    python3 test/tools/ci_lists_check.py [.ci/run]
"""

import re
import sys
from pathlib import Path

# What may skip on CI: what needs a GPU, and torch and XLA's FFI headers (jaxlib), which
# scripts/setup does not install.
MAY_SKIP = [
    "gpu",
    "*_gpu",
    "adapters/torch",
    "adapters/xla_ffi",
    "bench-smoke/bench-smoke-stream_pool",
    "bench-smoke/bench-smoke-ordering",
    "bench-smoke/bench-smoke-owner_queries",
    "bench-smoke/bench-smoke-streamcheck_launches",
    "bench-smoke/bench-smoke-partition",
]
# Suites (or SUITE/TEST) of which at least one test must pass.
REQUIRED = [
    "host",
    "compile-fail",
    "compile-fail/stream_view_from_int_zero-clang++",
    "headers",
    "consumers",
    "bridge/python-bridge",
    "fuzz",
    "tools",
    "streamcheck",
    "wheel",
    "asan",
    "tsan",
]
# Every host test under each sanitizer.
REQUIRE_ALL = ["asan/host", "tsan/host"]


def read_list(text, name):
    """The comma-separated values a bash variable gets from `name=...` and `name+=,...` lines."""
    values = []
    for line in text.splitlines():
        match = re.fullmatch(rf"{name}(\+?)=(.*)", line.strip())
        if match:
            value = match.group(2).strip().strip("'\"")
            values += [v.strip("'\"") for v in value.split(",") if v.strip("'\"")]
    return values


def problems(text):
    out = []
    for name, pinned in (("may_skip", MAY_SKIP), ("required", REQUIRED), ("require_all", REQUIRE_ALL)):
        found = read_list(text, name)
        if found != pinned:
            out.append(
                f".ci/run's {name} is {found}, pinned as {pinned}: change both, saying why in the commit "
                f"(added: {sorted(set(found) - set(pinned))}, removed: {sorted(set(pinned) - set(found))})"
            )
    for option, variable in (("--require", "required"), ("--may-skip", "may_skip"), ("--require-all", "require_all")):
        if not re.search(rf'{option} "\${variable}"', text):
            out.append(f'.ci/run does not pass {option} "${variable}" to count_results.py')
    return out


def main(argv):
    path = Path(argv[0]) if argv else Path(__file__).resolve().parents[2] / ".ci" / "run"
    found = problems(path.read_text())
    for line in found:
        print("FAIL: " + line)
    if not found:
        print(f"PASS: {path}'s required, require_all and may_skip lists are the pinned ones")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
