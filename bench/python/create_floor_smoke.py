#!/usr/bin/env python3
"""bench_package.py's floor, found and called as the benchmark does (load_floor), without timing:
with a device the call succeeds; without one it raises RuntimeError naming the CUDA call.

    python3 bench/python/create_floor_smoke.py BUILD_DIR
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_package import load_floor  # noqa: E402


def device_present():
    import ctypes

    try:
        cudart = ctypes.CDLL("libcudart.so.13")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return cudart.cudaGetDeviceCount(ctypes.byref(count)) == 0 and count.value > 0


def main():
    floor = load_floor(sys.argv[1])
    if device_present():
        floor()
        print("create_floor: a stream created and destroyed on the device")
        return 0
    try:
        floor()
    except RuntimeError as e:
        text = str(e)
        if "cudaStreamCreateWithPriority" not in text or "_create_floor" not in text:
            print(f"create_floor: the error does not name the call: {text!r}")
            return 1
        print(f"create_floor without a device: {text}")
        return 0
    print("create_floor: no device, yet the call did not raise")
    return 1


if __name__ == "__main__":
    sys.exit(main())
