"""How a gpu program starts (device_presence.hpp), checked on any machine:
- with a broken CUDA driver (fake_driver/'s libcuda.so.1 first on the library path) it fails,
  exit 1, naming the failed cudaGetDeviceCount: a broken driver is not "no device";
- with STREAMLIKE_REQUIRE_GPU=1 it never skips: exit 1 without a device (0 or 1 with one);
- without it, it skips (77) only when the machine has no device, and says so.
Usage: start_checks_test.py PROGRAM FAKE_DRIVER_DIR (the folder of fake_driver/'s libcuda.so.1)
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from expectations import expect, finish  # noqa: E402

program, fake_dir = sys.argv[1], sys.argv[2]


def run(extra_env, library_path=None):
    env = dict(os.environ)
    env.pop("STREAMLIKE_REQUIRE_GPU", None)
    # meson may have put the fake driver's folder on the path already: only the first run has it.
    kept = [
        p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p and os.path.realpath(p) != os.path.realpath(fake_dir)
    ]
    env["LD_LIBRARY_PATH"] = ":".join(kept)
    env.update(extra_env)
    if library_path:
        env["LD_LIBRARY_PATH"] = library_path + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    done = subprocess.run([program, "--test-case=__none__"], env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


rc, out = run({}, fake_dir)
expect(
    f"a broken driver: exit 1 naming cudaGetDeviceCount (got exit {rc})",
    rc == 1 and "cudaGetDeviceCount failed" in out,
    out,
)

rc, out = run({"STREAMLIKE_REQUIRE_GPU": "1"})
has_device = rc != 1 or "no CUDA device" not in out
expect(f"STREAMLIKE_REQUIRE_GPU=1: never a skip (got exit {rc})", rc != 77, out)
if not has_device:
    expect(
        "STREAMLIKE_REQUIRE_GPU=1 without a device: the failure names the variable",
        "STREAMLIKE_REQUIRE_GPU=1" in out,
        out,
    )

rc, out = run({})
if rc == 77:
    expect("a skip says there is no CUDA device", "no CUDA device" in out, out)
else:
    expect(f"with a device present it runs (got exit {rc})", rc == 0 and has_device, out)

finish("start_checks_test")
