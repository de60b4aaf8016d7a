#!/usr/bin/env python3
"""Instructions one streamlike::current_stream() call executes, per row of bench/current_stream,
without a GPU: each current/ row runs under callgrind with the fake CUDA of test/fake_cuda
preloaded, collecting inside current_stream() only, and the instructions are divided by the calls
(torch's stand-in, the first provider, is asked exactly once per call). The fake CUDA's own share (its
bookkeeping, not what the real driver costs) is shown apart.

    bench/tools/current_stream_instructions.py BUILD

Needs valgrind, and BUILD configured with -Dbenchmarks=enabled -Dtests=enabled; builds nothing.
"""

import os
import re
import subprocess
import sys
import tempfile

ROWS = [
    "current/device_0/outside",
    "current/device_0/inside",
    "current/current_device/outside",
    "current/current_device/inside",
    "registered/device_0/outside",
]
FAKE_CUDA_CALLS = re.compile(r"\b(cudaGetDevice|fake_cuCtxGetDevice_v2|fake_cuCtxGetDevice)\b")


def count(exe, fake, row):
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                "--collect-atstart=no",
                "--toggle-collect=streamlike::current_stream(int)",
                exe,
                f"--benchmark_filter=^{row}$",
                "--benchmark_min_time=0.02",
            ],
            env=dict(os.environ, LD_PRELOAD=fake),
            check=True,
            capture_output=True,
        )
        text = open(out).read()
        total = int(re.search(r"^totals: (\d+)", text, re.M).group(1))
        names, callee, calls = {}, "", 0
        for line in text.splitlines():
            m = re.match(r"^c?fn=\((\d+)\)(?: (.*))?", line)
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                if line.startswith("cfn="):
                    callee = names.get(m.group(1), "")
                continue
            m = re.match(r"^calls=(\d+)", line)
            if m and "aoti_torch_get_current_cuda_stream" in callee:
                calls += int(m.group(1))
        annotated = subprocess.run(
            ["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        cuda = 0
        for line in annotated.splitlines():
            m = re.match(r"^\s*([\d,]+) ", line)
            if m and FAKE_CUDA_CALLS.search(line):
                cuda = max(cuda, int(m.group(1).replace(",", "")))
        if calls == 0:
            sys.exit(f"current_stream_instructions.py: {row} made no call under callgrind")
        return total / calls, cuda / calls


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    exe = os.path.join(build, "bench", "current_stream")
    fake = os.path.abspath(os.path.join(build, "test", "fake_cuda", "libstreamlike_fake_cuda.so"))
    for path in (exe, fake):
        if not os.path.exists(path):
            sys.exit(f"current_stream_instructions.py: {path} is not built")
    print(f"{'row':34} {'per call':>9} {'fake CUDA':>10} {'the rest':>9}")
    for row in ROWS:
        total, cuda = count(exe, fake, row)
        print(f"{row:34} {total:9.1f} {cuda:10.1f} {total - cuda:9.1f}")


if __name__ == "__main__":
    main()
