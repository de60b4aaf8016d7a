#!/usr/bin/env python3
"""Runs a Google Benchmark program and prints each benchmark's time as a ratio against the
baseline measured in the same run; exits 1 if any judged ratio (--judge) exceeds the target.

    bench/ratios.py build/bench/get_stream_routes                 # defaults: 20 reps, 0.1 s, 1.02
    bench/ratios.py BIN --repetitions 30 --min-time 0.2 --target 1.02 --markdown --json-out run.json

Why medians of repetitions, interleaved: on a small shared VM one repetition can lose its core
to a neighbour, which moves a mean but not a median; and running the repetitions of all
benchmarks in random order (--benchmark_enable_random_interleaving) spreads slow phases of
the machine over every route instead of charging them to whichever benchmark ran then. CPU
time (the default metric) leaves out the time the thread waited for a core.

Exit status: 0 all judged ratios within the target, 1 some ratio above it, 2 the run itself failed.
"""
import argparse
import json
import statistics
import subprocess
import sys

def die(message):
    """The run itself failed (not a verdict): exit status 2."""
    print("ratios.py: " + message, file=sys.stderr)
    sys.exit(2)



def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("binary", nargs="?", help="the benchmark program (e.g. build/bench/get_stream_routes)")
    p.add_argument("--from-json", default=None, metavar="FILE",
                   help="analyse a run saved with --json-out instead of running the program")
    p.add_argument("--repetitions", type=int, default=20, help="repetitions per benchmark (default 20)")
    p.add_argument("--min-time", type=float, default=0.1,
                   help="seconds each repetition runs at least (--benchmark_min_time; default 0.1)")
    p.add_argument("--target", type=float, default=1.02, help="largest ratio allowed (default 1.02)")
    p.add_argument("--baseline", default="baseline/",
                   help="the benchmark whose name starts with this is the baseline (default 'baseline/')")
    p.add_argument("--also-vs", default="route/cudaStream_t", metavar="NAME",
                   help="print a second ratio against this benchmark, if the run has it (default "
                        "'route/cudaStream_t': the raw handle through the same generic edge, which "
                        "separates what get_stream costs from what the edge's signature costs); not judged")
    p.add_argument("--judge", action="append", default=None, metavar="PREFIX",
                   help="only benchmarks whose names start with PREFIX are held to the target (repeatable; "
                        "default: 'route/' and 'control/'); the others are printed as diagnostics")
    p.add_argument("--metric", choices=["real_time", "cpu_time"], default="cpu_time",
                   help="which time to compare (default cpu_time: the thread's own time, which leaves out "
                        "the time other processes on a shared machine take its core; real_time includes it)")
    p.add_argument("--filter", default=None, help="passed as --benchmark_filter")
    p.add_argument("--no-interleave", action="store_true", help="run repetitions in order, not interleaved")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown (for RESULTS.md)")
    p.add_argument("--json-out", default=None, help="also save the raw JSON output here")
    return p.parse_args()


def run(args):
    cmd = [
        args.binary,
        "--benchmark_format=json",
        f"--benchmark_repetitions={args.repetitions}",
        f"--benchmark_min_time={args.min_time}",
        # Each repetition, not only the aggregates: the medians and spreads are computed here.
        "--benchmark_report_aggregates_only=false",
        f"--benchmark_enable_random_interleaving={'false' if args.no_interleave else 'true'}",
    ]
    if args.filter:
        cmd.append(f"--benchmark_filter={args.filter}")
    print("command:", " ".join(cmd), file=sys.stderr)
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    except OSError as e:
        die(f"cannot run {args.binary}: {e}")
    if proc.returncode != 0:
        die(f"{args.binary} exited with {proc.returncode}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            f.write(proc.stdout)
    return json.loads(proc.stdout)


def main():
    args = parse_args()
    if args.from_json:
        with open(args.from_json) as f:
            data = json.load(f)
    elif args.binary:
        data = run(args)
    else:
        die("give the benchmark program, or --from-json FILE")

    # Per benchmark, in registration order: the times of its repetitions, in nanoseconds.
    unit_ns = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    samples, order = {}, {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        name = b.get("run_name", b["name"])
        samples.setdefault(name, []).append(b[args.metric] * unit_ns[b.get("time_unit", "ns")])
        # Interleaving shuffles the output; print in the program's registration order.
        order[name] = (b.get("family_index", 0), b.get("per_family_instance_index", 0))
    samples = dict(sorted(samples.items(), key=lambda kv: order[kv[0]]))
    if not samples:
        die("the run produced no benchmark results")

    baselines = [n for n in samples if n.startswith(args.baseline)]
    if len(baselines) != 1:
        die(f"need exactly one benchmark named '{args.baseline}...', found {baselines}")
    base_name = baselines[0]
    base = statistics.median(samples[base_name])

    rows = []
    for name, times in samples.items():
        med = statistics.median(times)
        # Spread of the repetitions: half the interquartile range, relative to the median.
        q = statistics.quantiles(times, n=4) if len(times) >= 2 else [med, med, med]
        spread = (q[2] - q[0]) / 2 / med
        rows.append((name, len(times), med, min(times), spread, med / base))
    also = statistics.median(samples[args.also_vs]) if args.also_vs in samples else None

    ctx = data.get("context", {})
    print(f"date: {ctx.get('date')}  host: {ctx.get('host_name')}  cpus: {ctx.get('num_cpus')} "
          f"@ {ctx.get('mhz_per_cpu')} MHz  scaling: {ctx.get('cpu_scaling_enabled')}  "
          f"load: {ctx.get('load_avg')}")
    reps = max(len(t) for t in samples.values())
    how = "from " + args.from_json if args.from_json else (
        f"min_time {args.min_time} s, {'in order' if args.no_interleave else 'interleaved'}")
    print(f"metric: median {args.metric} of {reps} repetitions ({how}); baseline: {base_name}; "
          f"target: ratio <= {args.target}")
    judged = tuple(args.judge or ["route/", "control/"])
    failed = [r for r in rows if r[0].startswith(judged) and r[5] > args.target]

    header = ["route", "reps", "median ns", "min ns", "+/- (IQR/2)", "ratio vs baseline"]
    if also is not None:
        header.append(f"ratio vs {args.also_vs}")
    header.append("")
    lines = []
    for name, reps, med, mn, spread, ratio in rows:
        if name == base_name:
            verdict = "baseline"
        elif not name.startswith(judged):
            verdict = "(diagnostic)"
        else:
            verdict = "ok" if ratio <= args.target else "OVER"
        cells = [name, str(reps), f"{med:.3f}", f"{mn:.3f}", f"{spread * 100:.1f}%", f"{ratio:.3f}"]
        if also is not None:
            cells.append(f"{med / also:.3f}")
        lines.append(cells + [verdict])
    if args.markdown:
        print("| " + " | ".join(header[:-1]) + " | verdict |")
        print("|" + "---|" * len(header))
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(header[i]), *(len(l[i]) for l in lines)) for i in range(len(header))]
        print("  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths))))
        for line in lines:
            print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))

    if failed:
        print(f"FAIL: {len(failed)} above {args.target}: " + ", ".join(f"{r[0]} ({r[5]:.3f})" for r in failed))
        return 1
    print(f"PASS: every judged ratio <= {args.target} "
          f"(largest {max(r[5] for r in rows if r[0].startswith(judged)):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
