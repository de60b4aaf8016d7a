#!/usr/bin/env python3
"""Builds one host benchmark program at several commits and runs them in the same run, so that a
change of the library can be told from a change of the machine.

    bench/tools/compare_commits.py ace7c4e^ HEAD                    # shared_stream_copy at both
    bench/tools/compare_commits.py --program shared_stream_copy --rounds 6 --out bench/results/RUN REV...

Each REV is extracted with `git archive` into a scratch folder (the working tree is not touched),
configured with `meson setup -Dbenchmarks=enabled -Dtests=disabled -Dexamples=disabled` (the
project's compiler, $CXX if set) and only the program is built. Then --rounds rounds run every
build once each, in a new random order per round, each run --repetitions interleaved repetitions
of --min-time seconds (the builds run in parallel; the runs never do); a row's time is the median over
all its repetitions of all rounds.

For every build it prints each row's median and its ratio against the baseline of the same build
and thread count (copy/std::shared_ptr<int>/threads:N for shared_stream_copy), beside the control
row's ratio (the baseline measured again: a control off 1 means the run was noisy). Raw JSON
of every run goes to --out (default: a scratch folder, printed). Exit status: 0, or 2 if a build
or a run failed.
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# program -> (rows regex, baseline of a row given its thread suffix, control regex)
PROGRAMS = {
    "shared_stream_copy": {
        "filter": "copy/|control/|last/",
        "baseline": lambda name: (
            re.sub(r"^(copy|control)/[^/]+", "copy/std::shared_ptr<int>", name)
            if name.startswith(("copy/", "control/"))
            else "last/std::shared_ptr<int>/threads:1"
        ),
    },
}


def sh(cmd, **kw):
    print("+ " + " ".join(cmd), file=sys.stderr)
    return subprocess.run(cmd, **kw)


def build(rev, scratch, program):
    if "=" in rev and os.path.isfile(rev.split("=", 1)[1]):  # LABEL=PROGRAM: a build made elsewhere
        label, exe = rev.split("=", 1)
        return label, os.path.abspath(exe)
    if "=" in rev:  # LABEL=DIR: a source tree already extracted (a machine without the git history)
        sha, src = rev.split("=", 1)
        src = os.path.abspath(src)
    else:
        sha = subprocess.run(
            ["git", "-C", ROOT, "rev-parse", "--short", rev], capture_output=True, text=True, check=True
        ).stdout.strip()
        src = os.path.join(scratch, sha)
        os.makedirs(src, exist_ok=True)
        archive = subprocess.Popen(["git", "-C", ROOT, "archive", sha], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", src], stdin=archive.stdout, check=True)
        archive.wait()
    b = os.path.join(scratch, sha + "-build")
    r = sh(
        [
            "meson",
            "setup",
            b,
            src,
            "-Dbenchmarks=enabled",
            "-Dtests=disabled",
            "-Dexamples=disabled",
            "-Dpython=disabled",
        ],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-3000:] + r.stderr[-3000:])
        sys.exit(f"compare_commits: meson setup failed at {rev} ({sha})")
    r = sh(["meson", "compile", "-C", b, f"bench/{program}"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-3000:] + r.stderr[-3000:])
        sys.exit(f"compare_commits: building {program} failed at {rev} ({sha})")
    return sha, os.path.join(b, "bench", program)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "revs",
        nargs="+",
        help="commits (anything git rev-parse takes), LABEL=DIR for a source "
        "tree extracted beforehand (git archive REV | tar -x -C DIR), or LABEL=PROGRAM for a program "
        "already built",
    )
    p.add_argument("--program", default="shared_stream_copy", choices=sorted(PROGRAMS))
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.1)
    p.add_argument("--metric", default="cpu_time", choices=["cpu_time", "real_time"])
    p.add_argument("--out", default=None, help="folder for the raw JSON (one file per build and round)")
    args = p.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    spec = PROGRAMS[args.program]
    scratch = tempfile.mkdtemp(prefix="compare_commits-")
    out = args.out or scratch
    os.makedirs(out, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(args.revs)) as pool:  # each build is mostly waiting
        builds = list(pool.map(lambda rev: build(rev, scratch, args.program), args.revs))
    labels = {sha: sha if "=" in rev else f"{rev} ({sha})" for rev, (sha, _) in zip(args.revs, builds, strict=True)}

    samples = {sha: {} for sha, _ in builds}
    for rnd in range(args.rounds):
        order = list(builds)
        random.shuffle(order)
        for sha, exe in order:
            r = subprocess.run(
                [
                    exe,
                    "--benchmark_format=json",
                    f"--benchmark_filter={spec['filter']}",
                    f"--benchmark_repetitions={args.repetitions}",
                    f"--benchmark_min_time={args.min_time}",
                    "--benchmark_report_aggregates_only=false",
                    "--benchmark_enable_random_interleaving=true",
                ],
                capture_output=True,
                text=True,
            )
            if r.returncode != 0:
                sys.stderr.write(r.stderr)
                print(f"compare_commits: {exe} exited with {r.returncode}", file=sys.stderr)
                return 2
            with open(os.path.join(out, f"{args.program}-{sha}-round{rnd}.json"), "w") as f:
                f.write(r.stdout)
            for b in json.loads(r.stdout)["benchmarks"]:
                if b.get("run_type") == "iteration" and not b.get("error_occurred"):
                    samples[sha].setdefault(b["run_name"], []).append(b[args.metric])

    print(
        f"{args.program}: {args.rounds} rounds x {args.repetitions} repetitions x {args.min_time} s per build, "
        f"median {args.metric}; raw JSON in {out}"
    )
    print("| build | row | median ns | ratio vs its baseline |")
    print("|---|---|---:|---:|")
    summary = {}
    for sha, _ in builds:
        med = {n: statistics.median(t) for n, t in samples[sha].items()}
        for n, m in sorted(med.items()):
            base = spec["baseline"](n)
            ratio = m / med[base] if base in med and base != n else None
            summary.setdefault(labels[sha], {})[n] = {"median_ns": m, "ratio": ratio}
            print(f"| {labels[sha]} | {n} | {m:.2f} | {f'{ratio:.3f}' if ratio is not None else 'baseline'} |")
    with open(os.path.join(out, f"{args.program}-summary.json"), "w") as f:
        json.dump(
            {
                "program": args.program,
                "rounds": args.rounds,
                "repetitions": args.repetitions,
                "min_time": args.min_time,
                "metric": args.metric,
                "builds": summary,
            },
            f,
            indent=2,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
