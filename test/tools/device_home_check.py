#!/usr/bin/env python3
"""The current device is asked in one place: src/cuda_context.cpp (cuda_context::current_device and
current_device_or_minus_one). Any other source of the library, the package or the public headers
that calls cudaGetDevice itself fails here, named, so that a second way of asking cannot creep back.

ASKS_ITSELF lists the sources allowed to ask through their own path; it is empty, and a source
that must ask itself again is named here with the reason (current_stream() asks through
cuda_context::current_device, whose driver-first read is inline and measured in
bench/current_stream.cpp).

    python3 test/tools/current_device_home_check.py [SOURCE_ROOT]
"""

import re
import sys
from pathlib import Path

HOME = "src/cuda_context.cpp"
ASKS_ITSELF: set[str] = set()
SEARCHED = ("src", "include/streamlike", "python/streamlike")
CALL = re.compile(r"\bcudaGetDevice\s*\(")


def callers(root):
    found = set()
    for folder in SEARCHED:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in {".cpp", ".hpp", ".cu", ".cuh", ".h"} and CALL.search(path.read_text()):
                found.add(path.relative_to(root).as_posix())
    return found


def problems(root):
    found = callers(root)
    out = []
    if HOME not in found:
        out.append(f"{HOME} no longer asks cudaGetDevice: where is the current device asked now?")
    for path in sorted(found - {HOME} - ASKS_ITSELF):
        out.append(f"{path} calls cudaGetDevice; ask cuda_context::current_device (src/cuda_context.hpp)")
    for path in sorted(ASKS_ITSELF - found):
        out.append(f"{path} no longer calls cudaGetDevice: remove it from ASKS_ITSELF")
    return out


def main(argv):
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[2]
    out = problems(root)
    for line in out:
        print("FAIL: " + line)
    if not out:
        listed = f" (and {len(ASKS_ITSELF)} listed sources)" if ASKS_ITSELF else ""
        print(f"PASS: the current device is asked in {HOME}{listed}")
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
