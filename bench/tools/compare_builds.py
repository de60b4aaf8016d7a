#!/usr/bin/env python3
"""Compares the same benchmark program built against two versions of libstreamlike.

    bench/tools/compare_builds.py --old OLD_BIN --new NEW_BIN [--rounds 6] [--repetitions 5]
                            [--judge REGEX] [--target 1.05] [--metric real_time]

The two programs are run alternately (old, new, new, old, ...), `--rounds` times each, in one
session on one machine; each run reports every repetition of every row. For each row present in
both, the median over all repetitions of each build is taken and new/old printed; rows matching
--judge must stay <= --target. Exit status: 0 if every judged row passes, 1 otherwise.

Used for claims of the kind "this change does not cost the eager path": the old build is the
library at the commit before the change, the new one the library after it (bench/RESULTS.md).
"""

import argparse
import json
import re
import statistics
import subprocess
import sys


def run(binary, repetitions, min_time, filt):
    cmd = [
        binary,
        "--benchmark_format=json",
        f"--benchmark_repetitions={repetitions}",
        f"--benchmark_min_time={min_time}",
        "--benchmark_report_aggregates_only=false",
        "--benchmark_enable_random_interleaving=true",
    ]
    if filt:
        cmd.append(f"--benchmark_filter={filt}")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["benchmarks"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--old", required=True)
    p.add_argument("--new", required=True)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min-time", default="0.1")
    p.add_argument("--filter", default=None)
    p.add_argument("--judge", default=None, help="regex of the rows judged (full match)")
    p.add_argument("--target", type=float, default=1.05)
    p.add_argument("--metric", default="real_time", choices=["real_time", "cpu_time"])
    p.add_argument("--json-out", default=None)
    args = p.parse_args()

    times = {"old": {}, "new": {}}
    for r in range(args.rounds):
        order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
        for which in order:
            binary = args.old if which == "old" else args.new
            for b in run(binary, args.repetitions, args.min_time, args.filter):
                if b.get("run_type") != "iteration":
                    continue
                times[which].setdefault(b["run_name"], []).append(b[args.metric])

    failed = 0
    rows = []
    print(f"{'row':58} {'old ns':>10} {'new ns':>10} {'new/old':>8}")
    for name in times["new"]:
        if name not in times["old"]:
            print(f"{name:58} {'-':>10} {statistics.median(times['new'][name]):10.2f} {'(new)':>8}")
            continue
        old = statistics.median(times["old"][name])
        new = statistics.median(times["new"][name])
        ratio = new / old
        verdict = ""
        if args.judge and re.fullmatch(args.judge, name):
            ok = ratio <= args.target
            failed += not ok
            verdict = f"  TARGET <= {args.target}: {'PASS' if ok else 'FAIL'}"
        print(f"{name:58} {old:10.2f} {new:10.2f} {ratio:8.3f}{verdict}")
        rows.append(
            {
                "row": name,
                "old_ns": old,
                "new_ns": new,
                "ratio": ratio,
                "samples_old": len(times["old"][name]),
                "samples_new": len(times["new"][name]),
            }
        )
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"rows": rows, "raw": times}, f, indent=1)
    print(f"{args.rounds} rounds x {args.repetitions} repetitions per build, {args.metric}, medians")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
