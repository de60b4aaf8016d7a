#!/usr/bin/env python3
"""Runs the tour (examples/tour.cu) as a new user does and checks what it says, not only that it
passes: the first thing it says about the machine is either the device it found or, without one,
streamlike's wording of why ("no CUDA driver found" / "no CUDA device"), never CUDA's misleading
"driver version is insufficient"; and it ends with PASS.

    python3 examples/check_tour.py BUILD/examples/tour
"""

import subprocess
import sys

MISLEADING = "driver version is insufficient"


def problems(output, returncode):
    lines = output.splitlines()
    found = []
    if returncode != 0:
        found.append(f"the tour exited {returncode}")
    if MISLEADING in output:
        found.append(f"the tour prints CUDA's {MISLEADING!r} (streamlike::cuda_error_text words it clearly)")
    machine = [line for line in lines if line.startswith(("CUDA device ", "no GPU to run on: "))]
    if not machine:
        found.append("the tour says neither which device it uses nor that there is none")
    elif machine[0].startswith("no GPU to run on: ") and not any(
        clear in machine[0] for clear in ("no CUDA driver found", "no CUDA device")
    ):
        found.append(f"the no-device line does not say why in streamlike's words: {machine[0]!r}")
    if not lines or not lines[-1].startswith("PASS: "):
        found.append(f"the tour's last line is not PASS: {lines[-1] if lines else '(no output)'!r}")
    return found


def main(argv):
    run = subprocess.run([argv[0]], capture_output=True, text=True, timeout=300)
    found = problems(run.stdout + run.stderr, run.returncode)
    for line in found:
        print("FAIL: " + line)
    if found:
        print("--- the tour's output:\n" + run.stdout + run.stderr)
        return 1
    print("PASS: the tour ran and said what it found in streamlike's words")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
