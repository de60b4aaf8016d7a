#!/usr/bin/env python3
"""The device count and the current device are asked in one place: src/devices.hpp and
src/devices.cpp (devices::count, devices::current and their non-throwing forms). Any other source
of the library, the package or the public headers that asks CUDA itself (cudaGetDeviceCount,
cudaGetDevice, or the driver's cuDeviceGetCount and current-context cuCtxGetDevice through the
entry-point table) fails here, named, so that a second way of asking, or a second cache of the
count, cannot creep back.

ASKS_ITSELF lists the sources allowed to ask through their own path; it is empty, and a source
that must ask itself again is named here with the reason (current_stream() asks through
devices::current_driver_first, whose driver-first read is inline and measured in
bench/current_stream.cpp).

    python3 test/tools/device_home_check.py [SOURCE_ROOT]
"""

import re
import sys
from pathlib import Path

HOME = {"src/devices.hpp", "src/devices.cpp"}
ASKS_ITSELF: set[str] = set()
SEARCHED = ("src", "include/streamlike", "python/streamlike")
# Where the driver's functions are looked up by name, not called.
TABLE = {"src/driver_entry_points.hpp", "src/driver_entry_points.cpp"}
CALLS = {
    "cudaGetDevice": re.compile(r"\bcudaGetDevice\s*\("),
    "cudaGetDeviceCount": re.compile(r"\bcudaGetDeviceCount\s*\("),
    "cuDeviceGetCount": re.compile(r"\bdevice_get_count\b|\bcuDeviceGetCount\s*\("),
    "cuCtxGetDevice of the current context": re.compile(r"\bcurrent_ctx_get_device\b"),
}


def callers(root):
    found = {}
    for folder in SEARCHED:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in {".cpp", ".hpp", ".cu", ".cuh", ".h"}:
                continue
            name = path.relative_to(root).as_posix()
            if name in TABLE:
                continue
            text = path.read_text()
            asked = sorted(call for call, pattern in CALLS.items() if pattern.search(text))
            if asked:
                found[name] = asked
    return found


def problems(root):
    found = callers(root)
    out = []
    asked_at_home = {call for name in HOME for call in found.get(name, [])}
    for call in sorted(set(CALLS) - asked_at_home):
        out.append(f"{' and '.join(sorted(HOME))} no longer ask {call}: where is it asked now?")
    for path in sorted(set(found) - HOME - ASKS_ITSELF):
        out.append(
            f"{path} asks {', '.join(found[path])} itself; ask devices::count or devices::current (src/devices.hpp)"
        )
    for path in sorted(ASKS_ITSELF - set(found)):
        out.append(f"{path} no longer asks itself: remove it from ASKS_ITSELF")
    return out


def main(argv):
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[2]
    out = problems(root)
    for line in out:
        print("FAIL: " + line)
    if not out:
        listed = f" (and {len(ASKS_ITSELF)} listed sources)" if ASKS_ITSELF else ""
        print(f"PASS: the device count and the current device are asked in {' and '.join(sorted(HOME))}{listed}")
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
