#!/usr/bin/env python3
"""Runs a Google Benchmark program and prints each benchmark's time as a ratio against a baseline
measured in the same run; exits 1 if a judged ratio misses its target.

Three ways to say what is judged:

  One baseline for every row (the default; what get_stream_routes needs):

    bench/tools/ratios.py build/bench/get_stream_routes        # baseline route/cudaStream_t, judged route/ and
                                                         # control/ rows, target 1.02, 20 reps x 0.1 s
    bench/tools/ratios.py BIN --baseline NAME --judge PREFIX --target 1.02 --also-vs NAME

  Per-row baselines, one rule each (--compare, repeatable; what the other programs need):

    bench/tools/ratios.py build/bench/shared_stream_copy \\
        --compare 'copy/shared_stream_keep_alive(/threads:\\d+)' 'copy/std::shared_ptr<int>\\1' '<=' 1.0

    A rule is ROW_REGEX BASELINE OP TARGET: every row whose name matches ROW_REGEX in full is
    compared with the row named BASELINE (in which \\1... are ROW_REGEX's groups, as in re.sub), and
    OP says what passes: '<=' or '<' (ratio = row / baseline at most / below TARGET), or
    'faster>=' (speedup = baseline / row at least TARGET). A row may be judged by several rules.
    --info ROW_REGEX BASELINE prints a ratio without judging it; --reference ROW_REGEX NS LABEL
    prints a row beside a number measured elsewhere (e.g. cuda.core's), not judged;
    --versus ROW_REGEX NS LABEL OP TARGET judges rows against such a number.

    --control ROW_REGEX BASELINE TOLERANCE names control rows (the baseline measured again): if
    one's ratio is off 1 by more than TOLERANCE, every verdict reads INCONCLUSIVE. In single-
    baseline mode the control/ rows gate the same way, with TOLERANCE = --control-tolerance
    (default: target - 1).

  Rounds (--rounds ROW, with per-row rules; what stream_pool's creation claim needs):

    bench/tools/ratios.py build/bench/stream_pool --filter '^rounds/' --rounds rounds/creation \\
        --compare 'create/shared_stream::create\\+drop' 'create/cudaStreamCreate+cudaStreamDestroy' '<=' 1.05

    ROW (a name, or a regex or prefix naming exactly one row) runs one round of every way per iteration and
    reports each way's ns per call as a user counter named like a row. The rules then apply to
    those counters: repetition k of every counter was measured in the same window, so every ratio
    (--compare, --control, --info) is the median over repetitions of counter_k / baseline_k, not a
    ratio of medians; pairing cancels a drift of the machine that moves all ways together.

Output: the table of medians; then one line per verdict starting with TARGET, which is what
bench/tools/run_all.sh collects:

    TARGET <program>: <row> vs <baseline>: ratio 0.973 (target <= 1.0): PASS

Why medians of repetitions, interleaved: on a small shared VM one repetition can lose its core
to a neighbour, which moves a mean but not a median; and running the repetitions of all
benchmarks in random order (--benchmark_enable_random_interleaving) spreads slow phases of
the machine over every row instead of charging them to whichever benchmark ran then. CPU time
(the default metric) leaves out the time the thread waited for a core; --metric real_time is
the right one for CUDA calls, which may wait for the driver without using the CPU.

Exit status: 0 all judged ratios within their targets, 1 some ratio missed, 3 inconclusive (a
control row was off by more than its tolerance: the run was too noisy to judge), 2 the run itself
failed, 77 the program skipped itself (it exits 77 where it has nothing to measure, e.g. the GPU
programs on a machine without a CUDA device; its reason is printed).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys

SKIP = 77
INCONCLUSIVE = 3


def die(message):
    """The run itself failed (not a verdict): exit status 2."""
    print("ratios.py: " + message, file=sys.stderr)
    sys.exit(2)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("binary", nargs="?", help="the benchmark program (e.g. build/bench/get_stream_routes)")
    p.add_argument(
        "--from-json",
        default=None,
        metavar="FILE",
        help="analyse a run saved with --json-out instead of running the program",
    )
    p.add_argument("--repetitions", type=int, default=20, help="repetitions per benchmark (default 20)")
    p.add_argument(
        "--min-time",
        type=float,
        default=0.1,
        help="seconds each repetition runs at least (--benchmark_min_time; default 0.1)",
    )
    # One baseline for every row.
    p.add_argument(
        "--baseline",
        default="route/cudaStream_t",
        help="single-baseline mode: the row every ratio is against (its exact name, or a prefix "
        "that names one row; default 'route/cudaStream_t': the raw cudaStream_t through "
        "the same generic function)",
    )
    p.add_argument(
        "--target", type=float, default=1.02, help="single-baseline mode: largest ratio allowed (default 1.02)"
    )
    p.add_argument(
        "--control-tolerance",
        type=float,
        default=None,
        metavar="T",
        help="single-baseline mode: a control/ row off 1 by more than T makes the verdict "
        "INCONCLUSIVE (default: the target's margin, target - 1)",
    )
    p.add_argument(
        "--judge",
        action="append",
        default=None,
        metavar="PREFIX",
        help="single-baseline mode: rows whose names start with PREFIX are held to the target "
        "(repeatable; default: 'route/' and 'control/'); the others are printed as diagnostics",
    )
    p.add_argument(
        "--also-vs",
        default="diag/cudaStream_t->plain_function",
        metavar="NAME",
        help="single-baseline mode: print a second ratio against this row, if the run has it "
        "(default 'diag/cudaStream_t->plain_function': a plain non-template function taking "
        "the handle by value, which shows what an out-of-line S&& signature costs); not judged",
    )
    # Per-row baselines.
    p.add_argument(
        "--compare",
        action="append",
        nargs=4,
        default=[],
        metavar=("ROW_REGEX", "BASELINE", "OP", "TARGET"),
        help="judge every row matching ROW_REGEX against BASELINE (may use \\1 of ROW_REGEX): "
        "OP '<=' or '<' on row/baseline, 'faster>=' on baseline/row (repeatable)",
    )
    p.add_argument(
        "--info",
        action="append",
        nargs=2,
        default=[],
        metavar=("ROW_REGEX", "BASELINE"),
        help="print the ratio of every row matching ROW_REGEX against BASELINE, not judged (repeatable)",
    )
    p.add_argument(
        "--reference",
        action="append",
        nargs=3,
        default=[],
        metavar=("ROW_REGEX", "NS", "LABEL"),
        help="print rows matching ROW_REGEX beside an outside measurement of NS nanoseconds, not judged",
    )
    p.add_argument(
        "--versus",
        action="append",
        nargs=5,
        default=[],
        metavar=("ROW_REGEX", "NS", "LABEL", "OP", "TARGET"),
        help="judge every row matching ROW_REGEX against an outside measurement of NS nanoseconds "
        "(LABEL names it; e.g. cuda.core's, measured by bench/tools/references.py in the same run_all.sh "
        "run): OP and TARGET as for --compare (repeatable)",
    )
    p.add_argument(
        "--control",
        action="append",
        nargs=3,
        default=[],
        metavar=("ROW_REGEX", "BASELINE", "TOLERANCE"),
        help="a control row: the baseline measured again, whose ratio should be 1. If any control's "
        "ratio is off 1 by more than TOLERANCE (e.g. 0.05), the run was too noisy to tell and "
        "every verdict of --compare reads INCONCLUSIVE instead of PASS or FAIL (repeatable)",
    )
    p.add_argument(
        "--rounds",
        default=None,
        metavar="ROW",
        help="judge the user counters of ROW (its name, or a regex or prefix naming one row) instead of the rows: "
        "each counter is one way's ns per call over a repetition's rounds, and every ratio of the rules "
        "is the median over repetitions of the per-repetition ratio",
    )
    p.add_argument(
        "--processes",
        type=int,
        default=1,
        metavar="N",
        help="with --rounds: run the program N times and take each ratio as the median over the "
        "processes of each one's median per-round ratio. One process's layout in memory biases all its "
        "rounds alike (a green stream's create + drop: 1.024 to 1.050 over five processes of one "
        "binary on one host), which more rounds in it do not average out",
    )
    p.add_argument("--name", default=None, help="what TARGET lines call the program (default: its file name)")
    p.add_argument(
        "--metric",
        choices=["real_time", "cpu_time"],
        default="cpu_time",
        help="which time to compare (default cpu_time: the thread's own time, which leaves out "
        "the time other processes on a shared machine take its core; real_time includes it)",
    )
    p.add_argument("--filter", default=None, help="passed as --benchmark_filter")
    p.add_argument(
        "--program-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="an argument of the program's own, passed before Google Benchmark's (repeatable; write "
        "--program-arg=--flag=value for one that starts with --)",
    )
    p.add_argument("--no-interleave", action="store_true", help="run repetitions in order, not interleaved")
    p.add_argument("--markdown", action="store_true", help="print the tables as Markdown (for RESULTS.md)")
    p.add_argument("--json-out", default=None, help="also save the raw JSON output here")
    return p.parse_args()


def run(args, process=0):
    cmd = [
        args.binary,
        *args.program_arg,
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
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        die(f"cannot run {args.binary}: {e}")
    sys.stderr.write(proc.stderr)
    sys.stderr.flush()
    if proc.returncode == SKIP:
        # Nothing was measured; the program said why on stderr.
        reason = (proc.stderr.strip().splitlines() or ["no reason given"])[-1]
        print(f"TARGET {program_name(args)}: SKIP ({reason})")
        sys.exit(SKIP)
    if proc.returncode != 0:
        die(f"{args.binary} exited with {proc.returncode}")
    if args.json_out:
        # With --processes, process k > 0 beside the first: run.json, run.process1.json, ...
        stem, ext = os.path.splitext(args.json_out)
        with open(args.json_out if process == 0 else f"{stem}.process{process}{ext}", "w") as f:
            f.write(proc.stdout)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        # Google Benchmark exits 0 with no JSON when --benchmark_filter matches nothing.
        die(f"{args.binary} printed no benchmark JSON (filter {args.filter!r}: does it match a row?)")


def program_name(args):
    if args.name:
        return args.name
    return os.path.basename(args.binary or args.from_json or "?")


def print_table(header, lines, markdown):
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for line in lines:
            print("| " + " | ".join(line) + " |")
        return
    widths = [max(len(header[i]), *(len(line[i]) for line in lines)) for i in range(len(header))]

    def fmt(cells):
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=False))
        )

    print(fmt(header).rstrip())
    for line in lines:
        print(fmt(line).rstrip())


def collect(data, metric):
    """{name: [times of its repetitions, ns]} in registration order, and the names of rows that
    reported an error (SkipWithError) with their messages."""
    unit_ns = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    samples, order, errors = {}, {}, {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b.get("run_name", b["name"])
        if b.get("error_occurred"):
            errors[name] = b.get("error_message", "")
            continue
        samples.setdefault(name, []).append(b[metric] * unit_ns[b.get("time_unit", "ns")])
        # Interleaving shuffles the output; print in the program's registration order.
        order[name] = (b.get("family_index", 0), b.get("per_family_instance_index", 0))
    return dict(sorted(samples.items(), key=lambda kv: order[kv[0]])), errors


# What Google Benchmark's JSON gives every run; any other number of a run is a user counter.
STANDARD_KEYS = {
    "name",
    "run_name",
    "run_type",
    "family_index",
    "per_family_instance_index",
    "repetitions",
    "repetition_index",
    "threads",
    "iterations",
    "real_time",
    "cpu_time",
    "time_unit",
    "aggregate_name",
    "aggregate_unit",
    "error_occurred",
    "error_message",
    "skipped",
    "skip_message",
    "cpu_coefficient",
    "real_coefficient",
    "big_o",
    "rms",
    "allocs_per_iter",
    "max_bytes_used",
    "total_allocated_bytes",
    "net_heap_growth",
    "label",
}


def round_counters(data, row):
    """{counter: [its value in each repetition of ROW, by repetition index]}: the user counters of
    the one row named ROW (exactly, else in full by ROW as a regex, else by ROW as a prefix: Google
    Benchmark appends /real_time to a row that uses real time). A missing row, one without
    counters, or repetitions that report different counters end the run (exit 2): no claim may
    pass on what was not measured."""
    runs = [b for b in data["benchmarks"] if b.get("run_type") == "iteration"]
    names = list(dict.fromkeys(b.get("run_name", b["name"]) for b in runs))
    if row in names:
        found = [row]
    else:
        try:
            pattern = re.compile(row)
        except re.error as e:
            die(f"--rounds {row!r} is not a row name nor a regex: {e}")
        found = [n for n in names if pattern.fullmatch(n)] or [n for n in names if n.startswith(row)]
    if len(found) != 1:
        die(f"--rounds {row!r}: need exactly one row so named, found {found or 'none'} among {names}")
    row = found[0]
    reps = [b for b in runs if b.get("run_name", b["name"]) == row]
    failed = [b.get("error_message", "") for b in reps if b.get("error_occurred")]
    if failed:
        die(f"--rounds {row}: the row reported an error: {failed[0]}")
    reps.sort(key=lambda b: b.get("repetition_index", 0))

    def counters(b):
        return {
            k: float(v)
            for k, v in b.items()
            if k not in STANDARD_KEYS and isinstance(v, (int, float)) and not isinstance(v, bool)
        }

    per_rep = [counters(b) for b in reps]
    names = list(per_rep[0])
    if not names:
        die(f"--rounds {row}: the row has no user counters")
    for k, c in enumerate(per_rep):
        if set(c) != set(names):
            missing = sorted(set(names) - set(c))
            extra = sorted(set(c) - set(names))
            die(
                f"--rounds {row}: repetition {k} reports other counters than repetition 0 "
                f"(missing {missing}, extra {extra}): the rounds cannot be paired"
            )
    return {n: [c[n] for c in per_rep] for n in names}


def stats(times):
    med = statistics.median(times)
    # Spread of the repetitions: half the interquartile range, relative to the median.
    q = statistics.quantiles(times, n=4) if len(times) >= 2 else [med, med, med]
    return med, min(times), (q[2] - q[0]) / 2 / med


def fmt_ns(ns):
    return f"{ns:.3f}" if ns < 100 else f"{ns:.1f}"


def print_context(data, args, samples):
    ctx = data.get("context", {})
    print(
        f"date: {ctx.get('date')}  host: {ctx.get('host_name')}  cpus: {ctx.get('num_cpus')} "
        f"@ {ctx.get('mhz_per_cpu')} MHz  scaling: {ctx.get('cpu_scaling_enabled')}  "
        f"load: {ctx.get('load_avg')}"
    )
    # What the program added with benchmark::AddCustomContext (sizes, device, versions).
    standard = {
        "date",
        "host_name",
        "executable",
        "num_cpus",
        "mhz_per_cpu",
        "cpu_scaling_enabled",
        "caches",
        "load_avg",
        "library_build_type",
        "json_schema_version",
    }
    for key, value in ctx.items():
        if key not in standard:
            print(f"{key}: {value}")
    reps = max(len(t) for t in samples.values())
    if args.rounds:
        print(
            f"metric: the user counters of {args.rounds} (each way's mean ns per call over a repetition's "
            f"rounds), {reps // args.processes} repetitions"
            + (f" in each of {args.processes} processes" if args.processes > 1 else "")
            + "; ratios: median over repetitions of the per-repetition ratio"
            + (", then over processes" if args.processes > 1 else "")
        )
        return
    how = (
        "from " + args.from_json
        if args.from_json
        else (f"min_time {args.min_time} s, {'in order' if args.no_interleave else 'interleaved'}")
    )
    print(f"metric: median {args.metric} of {reps} repetitions ({how})")


def single_baseline(args, samples, name):
    """Every row against one baseline; route/ and control/ (or --judge) rows held to --target."""
    exact = [n for n in samples if n == args.baseline]
    baselines = exact or [n for n in samples if n.startswith(args.baseline)]
    if len(baselines) != 1:
        die(f"need exactly one benchmark named '{args.baseline}' (or starting so), found {baselines}")
    base_name = baselines[0]
    base = statistics.median(samples[base_name])
    also = statistics.median(samples[args.also_vs]) if args.also_vs in samples else None
    judged = tuple(args.judge or ["route/"])

    def is_judged(n):
        return n != base_name and n.startswith(judged)

    # control/ rows: the baseline again. Their ratio should be 1; one off by more than the
    # target's margin means the run cannot tell a route's cost from noise.
    def is_control(n):
        return n != base_name and n.startswith("control/")

    margin = args.target - 1 if args.control_tolerance is None else args.control_tolerance
    print(
        f"baseline: {base_name}; judged: rows starting with {', '.join(judged)}; target: ratio <= {args.target}; "
        f"control/ rows gate: |ratio - 1| <= {margin:.3g}"
    )

    header = ["benchmark", "reps", "median ns", "min ns", "+/- (IQR/2)", f"ratio vs {base_name}"]
    if also is not None:
        header.append(f"ratio vs {args.also_vs}")
    header.append("verdict")
    lines, ratios, controls = [], {}, {}
    for n, times in samples.items():
        med, mn, spread = stats(times)
        ratio = med / base
        if n == base_name:
            verdict = "baseline"
        elif is_control(n):
            controls[n] = ratio
            verdict = "control ok" if abs(ratio - 1) <= margin else "CONTROL OFF"
        elif not is_judged(n):
            verdict = "(diagnostic)"
        else:
            ratios[n] = ratio
            verdict = "ok" if ratio <= args.target else "OVER"
        cells = [n, str(len(times)), fmt_ns(med), fmt_ns(mn), f"{spread * 100:.1f}%", f"{ratio:.3f}"]
        if also is not None:
            cells.append(f"{med / also:.3f}")
        lines.append(cells + [verdict])
    print_table(header, lines, args.markdown)

    if not ratios:
        die("no judged rows in the run")
    failed = {n: r for n, r in ratios.items() if r > args.target}
    worst = max(ratios, key=ratios.get)
    off = {n: r for n, r in controls.items() if abs(r - 1) > margin}
    verdict = "INCONCLUSIVE" if off else ("FAIL" if failed else "PASS")
    detail = (
        ("over: " + ", ".join(f"{n} ({r:.3f})" for n, r in failed.items()))
        if failed
        else f"largest {ratios[worst]:.3f} ({worst})"
    )
    if off:
        detail = (
            "control off by more than "
            + f"{margin:.3g}: "
            + ", ".join(f"{n} ({r:.3f})" for n, r in off.items())
            + "; "
            + detail
        )
    elif controls:
        detail += "; controls " + ", ".join(f"{r:.3f}" for r in controls.values())
    print(
        f"TARGET {name}: every {' and '.join(judged)} row vs {base_name}: ratio <= {args.target}: {verdict} ({detail})"
    )
    return INCONCLUSIVE if off else (1 if failed else 0)


OPS = {
    "<=": (lambda ratio, target: ratio <= target, "ratio <= {t}"),
    "<": (lambda ratio, target: ratio < target, "ratio < {t}"),
    "faster>=": (lambda ratio, target: 1 / ratio >= target, "at least {t}x faster"),
}


def rules_mode(args, samples, errors, name, paired=False, processes=None):
    """Per-row baselines: --compare (judged), --info (printed), --reference (outside numbers).
    paired: the samples are --rounds counters, whose repetition k was measured in one window; a
    ratio is then the median of the per-repetition ratios, else the ratio of the medians.
    processes: with paired, the samples of each process apart (samples then pools them); a ratio
    is the median over the processes of each one's paired ratio."""
    medians = {n: stats(t) for n, t in samples.items()}
    status = 0

    def paired_ratio(of, row, base):
        return statistics.median(r / b for r, b in zip(of[row], of[base], strict=True))

    def ratio_of(row, base):
        if paired and processes:
            return statistics.median(paired_ratio(p, row, base) for p in processes)
        if paired:
            return paired_ratio(samples, row, base)
        return medians[row][0] / medians[base][0]

    def per_process(row, base):
        if not (paired and processes):
            return ""
        return "; per process " + ", ".join(f"{paired_ratio(p, row, base):.3f}" for p in processes)

    if paired and processes:
        how = (
            f"median over {len(processes)} processes of each one's median of "
            f"{len(next(iter(processes[0].values())))} per-repetition ratios; medians "
        )
    elif paired:
        how = f"median of {len(next(iter(samples.values())))} per-repetition ratios; medians "
    else:
        how = ""
    verdicts, infos = [], []

    def pairs(regex, baseline):
        pattern = re.compile(regex)
        found = []
        for n in samples:
            m = pattern.fullmatch(n)
            if m:
                found.append((n, m.expand(baseline)))
        return found

    # The table of every row, then the verdicts.
    header = ["benchmark", "reps", "median ns", "min ns", "+/- (IQR/2)"]
    lines = [
        [n, str(len(t)), fmt_ns(medians[n][0]), fmt_ns(medians[n][1]), f"{medians[n][2] * 100:.1f}%"]
        for n, t in samples.items()
    ]
    for n, message in errors.items():
        lines.append([n, "0", "-", "-", f"error: {message}"])
    print_table(header, lines, args.markdown)
    print()

    # Control rows first: the baseline measured again. One off 1 by more than its tolerance
    # means this run cannot tell the judged rows from noise.
    off = []
    control_rows = []
    for regex, baseline, tolerance in args.control:
        found = pairs(regex, baseline)
        if not found:
            off.append(f"{regex}: no such row")
        for row, base in found:
            if base not in medians:
                off.append(f"{row}: baseline {base} missing")
                continue
            ratio = ratio_of(row, base)
            good = abs(ratio - 1) <= float(tolerance)
            control_rows.append(
                [
                    row,
                    base,
                    f"{ratio:.3f}",
                    f"{1 / ratio:.1f}x",
                    f"|ratio - 1| <= {float(tolerance):g}",
                    "control ok" if good else "CONTROL OFF",
                ]
            )
            if not good:
                off.append(f"{row} {ratio:.3f}")
    gate = f"INCONCLUSIVE (control off: {'; '.join(off)})" if off else None

    header = ["benchmark", "against", "ratio", "speedup", "target", "verdict"]
    rows = list(control_rows)
    for regex, baseline, op, target in args.compare:
        if op not in OPS:
            die(f"--compare: unknown OP {op!r}; expected one of {', '.join(OPS)}")
        target = float(target)
        check, wording = OPS[op]
        found = pairs(regex, baseline)
        if not found:
            verdicts.append(
                f"TARGET {name}: {regex} vs {baseline}: {wording.format(t=target)}: FAIL (no such row in the run"
                + (f"; errors: {errors}" if errors else "")
                + ")"
            )
            status = 1
            continue
        for row, base in found:
            if base not in medians:
                verdicts.append(
                    f"TARGET {name}: {row} vs {base}: {wording.format(t=target)}: FAIL (baseline missing from the run)"
                )
                status = 1
                continue
            ratio = ratio_of(row, base)
            ok = check(ratio, target)
            verdict = gate or ("PASS" if ok else "FAIL")
            if not gate:
                status |= 0 if ok else 1
            rows.append(
                [row, base, f"{ratio:.3f}", f"{1 / ratio:.1f}x", wording.format(t=target), verdict.split(" ")[0]]
            )
            pace = f"{1 / ratio:.2f}x faster" if ratio <= 1 else f"{ratio:.2f}x slower"
            verdicts.append(
                f"TARGET {name}: {row} vs {base}: ratio {ratio:.4f} = {pace} "
                f"({how}{fmt_ns(medians[row][0])} vs {fmt_ns(medians[base][0])} ns{per_process(row, base)}; "
                f"target {wording.format(t=target)}): {verdict}"
            )
    for regex, ns, label, op, target in args.versus:
        if op not in OPS:
            die(f"--versus: unknown OP {op!r}; expected one of {', '.join(OPS)}")
        target = float(target)
        check, wording = OPS[op]
        found = pairs(regex, "")
        if not found:
            verdicts.append(
                f"TARGET {name}: {regex} vs {label}: {wording.format(t=target)}: FAIL (no such row in the run)"
            )
            status = 1
            continue
        for row, _ in found:
            ratio = medians[row][0] / float(ns)
            ok = check(ratio, target)
            verdict = gate or ("PASS" if ok else "FAIL")
            if not gate:
                status |= 0 if ok else 1
            rows.append(
                [
                    row,
                    f"{label} ({float(ns):g} ns)",
                    f"{ratio:.3f}",
                    f"{1 / ratio:.1f}x",
                    wording.format(t=target),
                    verdict.split(" ")[0],
                ]
            )
            pace = f"{1 / ratio:.2f}x faster" if ratio <= 1 else f"{ratio:.2f}x slower"
            verdicts.append(
                f"TARGET {name}: {row} vs {label}: ratio {ratio:.4f} = {pace} "
                f"({fmt_ns(medians[row][0])} vs {float(ns):g} ns, measured outside this program; target "
                f"{wording.format(t=target)}): {verdict}"
            )
    for regex, baseline in args.info:
        for row, base in pairs(regex, baseline):
            if base in medians:
                ratio = ratio_of(row, base)
                rows.append([row, base, f"{ratio:.3f}", f"{1 / ratio:.1f}x", "-", "(info)"])
    for regex, ns, label in args.reference:
        for row, _ in pairs(regex, ""):
            ratio = medians[row][0] / float(ns)
            rows.append(
                [
                    row,
                    f"{label} ({float(ns):g} ns, measured elsewhere)",
                    f"{ratio:.3f}",
                    f"{1 / ratio:.1f}x",
                    "-",
                    "(reference)",
                ]
            )
            infos.append(
                f"REFERENCE {name}: {row}: {fmt_ns(medians[row][0])} ns; {label}: {float(ns):g} ns "
                f"(ours/theirs {ratio:.3f}); not judged, measured elsewhere"
            )
    if rows:
        print_table(header, rows, args.markdown)
        print()
    for line in verdicts + infos:
        print(line)
    if status == 0 and gate and (args.compare or args.versus):
        return INCONCLUSIVE
    return status


def main():
    args = parse_args()
    if args.processes < 1:
        die(f"--processes {args.processes}: expected at least 1")
    if args.processes > 1 and (args.from_json or not args.rounds):
        die("--processes needs --rounds and a program to run (not --from-json)")
    if args.from_json:
        with open(args.from_json) as f:
            data = json.load(f)
    elif args.binary:
        data = run(args)
    else:
        die("give the benchmark program, or --from-json FILE")
    name = program_name(args)

    samples, errors = collect(data, args.metric)
    if not samples:
        if errors:
            # Every row called SkipWithError: the program could not measure here.
            reasons = sorted(set(errors.values()))
            print(f"TARGET {name}: SKIP (every benchmark reported an error: {'; '.join(reasons)})")
            return SKIP
        die("the run produced no benchmark results")
    rules = args.compare or args.versus or args.info or args.reference or args.control
    if args.rounds:
        if not rules:
            die("--rounds needs rules (--compare, --control, --info, ...) to judge its counters")
        processes = [round_counters(data, args.rounds)]
        for k in range(1, args.processes):
            processes.append(round_counters(run(args, k), args.rounds))
        samples = {n: [t for p in processes for t in p[n]] for n in processes[0]}
        print_context(data, args, samples)
        return rules_mode(args, samples, {}, name, paired=True, processes=processes if args.processes > 1 else None)
    print_context(data, args, samples)
    if rules:
        return rules_mode(args, samples, errors, name)
    return single_baseline(args, samples, name)


if __name__ == "__main__":
    sys.exit(main())
