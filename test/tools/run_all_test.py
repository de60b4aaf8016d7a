"""bench/tools/run_all.sh on folders of stub programs (shell scripts that print fixture Google Benchmark
JSON, or fail, or skip): every claim gets a verdict in the summary, a crash of the judge
(bench/tools/ratios.py) or a program that printed no verdict is a FAIL, never a silent pass, and the exit
status follows the summary. Usage: run_all_test.py RUN_ALL_SH"""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_judge_fixtures import benchmark_json  # noqa: E402
from expectations import expect, finish  # noqa: E402

script = sys.argv[1]

COPY_PASS = {f"copy/std::shared_ptr<int>/threads:{t}": [10.0] * 3 for t in (1, 2)}
COPY_PASS.update({f"control/std::shared_ptr<int>_again/threads:{t}": [10.0] * 3 for t in (1, 2)})
COPY_PASS.update({f"copy/shared_stream_keep_alive/threads:{t}": [7.0] * 3 for t in (1, 2)})
RAW_CREATES = [
    "cudaStreamCreate+cudaStreamDestroy",
    "cudaStreamCreateWithFlags(non_blocking)+cudaStreamDestroy",
    "cudaStreamCreateWithPriority(non_blocking)+cudaStreamDestroy",
    "cuStreamCreate(non_blocking)+cuStreamDestroy",
    "cuStreamCreateWithPriority(non_blocking)+cuStreamDestroy",
]
POOL_PASS = {f"create/{raw}": [5000.0] * 3 for raw in RAW_CREATES}
POOL_PASS.update(
    {
        "pool/stream_pool::get+drop": [20.0] * 3,
        "create/shared_stream::create+drop": [5100.0] * 3,
        "create/unique_stream::create+drop": [5000.0] * 3,
        "control/cudaStreamCreate+cudaStreamDestroy_again": [5000.0] * 3,
        "rounds/creation/real_time": [2.0e6] * 3,  # Google Benchmark names it so (UseRealTime)
        "rounds/pool/real_time": [1.0e6] * 3,
    }
)
# rounds/creation's counters (the creation claim's data): each way's ns per call, per repetition.
ROUNDS_PASS = {name: times for name, times in POOL_PASS.items() if name.startswith(("create/", "control/"))}
# rounds/pool's: the pool against the raw create, and the control.
POOL_ROUNDS_PASS = {
    name: POOL_PASS[name]
    for name in (
        "create/cudaStreamCreate+cudaStreamDestroy",
        "pool/stream_pool::get+drop",
        "control/cudaStreamCreate+cudaStreamDestroy_again",
    )
}


def pool_json(rows=POOL_PASS, rounds=ROUNDS_PASS, pool_rounds=POOL_ROUNDS_PASS):
    """stream_pool's output: the per-call rows, and rounds/creation and rounds/pool with the given
    counters (a stub ignores --benchmark_filter, so every run of stream_pool reads all of it)."""
    counters = {"rounds/pool/real_time": pool_rounds}
    if rounds:
        counters["rounds/creation/real_time"] = rounds
    return benchmark_json(rows, counters=counters)


def copy_json(rows=COPY_PASS):
    """shared_stream_copy's output: the per-call rows, and rounds/copy on each thread count whose
    counters are the per-call rows' times under the rows' names without /threads:N."""
    counters = {}
    for t in (1, 2):
        counters[f"rounds/copy/iterations:1/real_time/threads:{t}"] = {
            name.rsplit("/threads:", 1)[0]: times for name, times in rows.items() if name.endswith(f"/threads:{t}")
        }
    return benchmark_json({**rows, **{row: [5.0e6] * 3 for row in counters}}, counters=counters)


def stub(folder, name, body):
    path = os.path.join(folder, "bench", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def printing(folder, name, data):
    fixture = os.path.join(folder, name + ".fixture.json")
    with open(fixture, "w", encoding="utf-8") as f:
        json.dump(data, f)
    stub(folder, name, f"cat '{fixture}'")


def run_all(folder, *args):
    env = {**os.environ, "STREAMLIKE_COMMIT": "fixture"}
    done = subprocess.run(
        ["bash", script, folder, "--quick", "--out", os.path.join(folder, "out"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    return done.returncode, done.stdout + done.stderr


def summary(output):
    lines = output.splitlines()
    start = max((i for i, line in enumerate(lines) if line.startswith("== summary")), default=len(lines))
    return "\n".join(lines[start:])


def case(name):
    folder = tempfile.mkdtemp(prefix=f"run_all_test_{name}_")
    os.makedirs(os.path.join(folder, "bench"))
    return folder


folders = []

# Only shared_stream_copy, passing: its two claims pass, the rest were not built.
f = case("pass")
folders.append(f)
printing(f, "shared_stream_copy", copy_json())
rc, out = run_all(f)
s = summary(out)
expect(
    "a passing program: both of its claims PASS in the summary, exit 0",
    rc == 0
    and s.count("shared_stream_copy: copy/shared_stream_keep_alive vs") == 1
    and s.count("shared_stream_copy_threads2: copy/shared_stream_keep_alive vs") == 1
    and "2 passed, 0 failed" in s,
    out,
)
expect("programs not built read SKIP (not built)", "get_stream_routes: SKIP (not built)" in s, out)

# The judge crashes on shared_stream_copy's output (rows without the time it reads) while
# stream_pool passes: each crash is a FAIL, not a vanished claim.
f = case("crash")
folders.append(f)
broken = copy_json()
for b in broken["benchmarks"]:
    del b["cpu_time"]
printing(f, "shared_stream_copy", broken)
printing(f, "stream_pool", pool_json())
rc, out = run_all(f)
s = summary(out)
expect(
    "a crash of the judge is a FAIL named after the program, and the run fails",
    rc == 1
    and "shared_stream_copy: FAIL (the judge crashed" in s
    and "shared_stream_copy_threads2: FAIL (the judge crashed" in s
    and "6 passed, 3 failed" in s,
    out,
)
expect(
    "the other program's claims still pass (the pool, and creation against each raw way from the rounds)",
    s.count("stream_pool: ") == 1
    and s.count("stream_creation: create/shared_stream::create+drop vs create/") == 5
    and "median of 3 per-repetition ratios" in s
    and "3 failed" in s
    and "6 passed" in s,
    out,
)

# A program that fails (exit 1, nothing printed): the judge's run failed, a FAIL.
f = case("program_fails")
folders.append(f)
stub(f, "shared_stream_copy", "echo 'cannot start' >&2; exit 1")
printing(f, "stream_pool", pool_json())
rc, out = run_all(f)
s = summary(out)
expect(
    "a program that fails is a FAIL, and the run fails",
    rc == 1 and "shared_stream_copy: FAIL (the run itself failed" in s,
    out,
)

# A program whose output is not JSON: the judge cannot parse it; a FAIL.
f = case("garbage")
folders.append(f)
stub(f, "shared_stream_copy", "echo 'not json'")
printing(f, "stream_pool", pool_json())
rc, out = run_all(f)
s = summary(out)
expect("output the judge cannot read is a FAIL", rc == 1 and "shared_stream_copy: FAIL" in s, out)

# A program that lost a row its claim needs: FAIL (no such row), never a pass.
f = case("row_missing")
folders.append(f)
fewer = {k: v for k, v in COPY_PASS.items() if k != "copy/shared_stream_keep_alive/threads:2"}
printing(f, "shared_stream_copy", copy_json(fewer))
printing(f, "stream_pool", pool_json())
rc, out = run_all(f)
s = summary(out)
expect("a claim whose row is missing reads FAIL", rc == 1 and "no such row in the run" in s, out)

# A claim that misses its target.
f = case("slow")
folders.append(f)
slow = dict(COPY_PASS)
slow["copy/shared_stream_keep_alive/threads:1"] = [9.0] * 3
printing(f, "shared_stream_copy", copy_json(slow))
rc, out = run_all(f)
s = summary(out)
expect("a missed target reads FAIL and fails the run", rc == 1 and "1 passed, 1 failed" in s, out)

# Creation 1.04x the runtime's create but 1.10x the driver's, the fastest: the driver's rule fails.
f = case("slow_create")
folders.append(f)
slow_create = dict(ROUNDS_PASS)
slow_create["create/cuStreamCreate(non_blocking)+cuStreamDestroy"] = [4730.0] * 3
slow_create["create/shared_stream::create+drop"] = [5200.0] * 3
printing(f, "stream_pool", pool_json(rounds=slow_create))
rc, out = run_all(f)
s = summary(out)
driver_rule = (
    "stream_creation: create/shared_stream::create+drop vs create/cuStreamCreate(non_blocking)+cuStreamDestroy"
)
expect(
    "creation is held to the fastest raw way: 1.10x the driver's create fails, the others pass",
    rc == 1 and "5 passed, 1 failed" in s and driver_rule + ": ratio 1.0994" in s,
    out,
)

# Creation is judged from the rounds' counters, not from the per-call rows: slow per-call rows
# do not fail it, a noisy control in the rounds makes it INCONCLUSIVE (the pool's verdict stands),
# and a run without the rounds row is a FAIL, not a vanished claim.
f = case("rounds")
folders.append(f)
slow_rows = dict(POOL_PASS)
slow_rows["create/shared_stream::create+drop"] = [9000.0] * 3
noisy_rounds = dict(ROUNDS_PASS)
noisy_rounds["control/cudaStreamCreate+cudaStreamDestroy_again"] = [5100.0] * 3
printing(f, "stream_pool", pool_json(rows=slow_rows, rounds=noisy_rounds))
rc, out = run_all(f)
s = summary(out)
expect(
    "creation's control off by 2% in the rounds: its five verdicts INCONCLUSIVE, the pool's PASS",
    rc == 0
    and "1 passed, 0 failed" in s
    and "5 inconclusive" in s
    and s.count("stream_creation: create/shared_stream::create+drop vs create/") == 5,
    out,
)
printing(f, "stream_pool", pool_json(rounds=None))
rc, out = run_all(f)
s = summary(out)
expect(
    "stream_pool without rounds/creation's counters: creation is a FAIL (the run itself failed)",
    rc == 1 and "stream_creation: FAIL (the run itself failed" in s and "1 passed, 1 failed" in s,
    out,
)

# A noisy run: the control is off, the claims read INCONCLUSIVE; with nothing passing, exit 1.
f = case("noisy")
folders.append(f)
noisy = dict(COPY_PASS)
noisy["control/std::shared_ptr<int>_again/threads:1"] = [11.0] * 3
noisy["control/std::shared_ptr<int>_again/threads:2"] = [9.4] * 3
printing(f, "shared_stream_copy", copy_json(noisy))
rc, out = run_all(f)
s = summary(out)
expect(
    "an off control makes the claims INCONCLUSIVE, which is no pass (exit 1)",
    rc == 1 and "0 passed, 0 failed" in s and "2 inconclusive" in s,
    out,
)

# A GPU program that skips itself (77): SKIP, a failure only with --require-gpu.
f = case("gpu_skip")
folders.append(f)
printing(f, "shared_stream_copy", copy_json())
stub(f, "stream_pool", "echo 'no CUDA device' >&2; exit 77")
rc, out = run_all(f)
s = summary(out)
expect(
    "a GPU program that skips reads SKIP with its reason, for each of its runs; the run passes",
    rc == 0 and "stream_pool: SKIP (no CUDA device)" in s and "stream_creation: SKIP (no CUDA device)" in s,
    out,
)
rc, out = run_all(f, "--require-gpu")
s = summary(out)
expect(
    "with --require-gpu a skipped GPU program is a FAIL, for each of its runs",
    rc == 1 and "stream_pool: FAIL (--require-gpu) SKIP" in s and "stream_creation: FAIL (--require-gpu) SKIP" in s,
    out,
)

# A program whose rows are only shown (owner_queries): it prints no verdict and that is no FAIL;
# the same program crashing still is one.
QUERIES = {"query/core:stream_control_block::facts": [1.0] * 3, "query/shared_stream::id(created)": [0.7] * 3}
f = case("shown")
folders.append(f)
printing(f, "shared_stream_copy", copy_json())
printing(f, "owner_queries", benchmark_json(QUERIES))
rc, out = run_all(f)
s = summary(out)
expect(
    "a shown-only program that ran adds no verdict and no FAIL",
    rc == 0 and "owner_queries" not in s and "2 passed, 0 failed" in s,
    out,
)
stub(f, "owner_queries", "echo 'cannot start' >&2; exit 1")
rc, out = run_all(f)
s = summary(out)
expect("a shown-only program that fails is a FAIL", rc == 1 and "owner_queries: FAIL (the run itself failed" in s, out)

# Nothing built: nothing passed, exit 1.
f = case("empty")
folders.append(f)
rc, out = run_all(f)
expect("a run with nothing built passes nothing and fails", rc == 1 and "no target passed" in out, out)

for folder in folders:
    shutil.rmtree(folder, ignore_errors=True)
finish("run_all_test")
