"""bench/tools/ratios.py, the benchmark judge, on fixture runs (--from-json): each verdict (PASS, FAIL,
INCONCLUSIVE by a control row, SKIP), each comparison ('<=', '<', 'faster>='), a missing row or
baseline, the modes (one baseline; per-row rules; rules on one row's --rounds counters, paired by
repetition), and the exit status that bench/tools/run_all.sh checks against the verdicts.
Usage: ratios_test.py RATIOS_PY"""

import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_judge_fixtures import dumps  # noqa: E402
from expectations import expect, finish  # noqa: E402

script = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="ratios_test_")


def judge(rows, *args, **kwargs):
    path = os.path.join(tmp, f"run{judge.count}.json")
    judge.count += 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(dumps(rows, **kwargs))
    done = subprocess.run(
        [sys.executable, script, "--from-json", path, "--name", "fixture", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stdout + done.stderr


judge.count = 0


def targets(output):
    return [line for line in output.splitlines() if line.startswith("TARGET ")]


def verdicts(output):
    """The verdict word of each TARGET line (the first of PASS/FAIL/INCONCLUSIVE/SKIP after ': ')."""
    return [
        (re.search(r": (PASS|FAIL|INCONCLUSIVE|SKIP)\b", line) or re.search("()", "")).group(1)
        for line in targets(output)
    ]


r = [10.0] * 5  # the baseline's repetitions
# --- one baseline: route/ rows against route/cudaStream_t, target 1.02, control/ gates ----------
rc, out = judge({"route/cudaStream_t": r, "route/stream_view": [10.1] * 5, "diag/other": [50.0] * 5})
expect(
    "one baseline: a route within 1.02 passes (a diagnostic row of 5x is not judged)",
    rc == 0 and len(targets(out)) == 1 and targets(out)[0].endswith(")") and ": PASS (" in targets(out)[0],
    out,
)
rc, out = judge({"route/cudaStream_t": r, "route/stream_view": [10.1] * 5, "route/slow": [10.5] * 5})
expect("one baseline: a route over 1.02 fails and is named", rc == 1 and ": FAIL (over: route/slow (1.050)" in out, out)
rc, out = judge({"route/cudaStream_t": r, "route/stream_view": [10.5] * 5, "control/cudaStream_t_again": [10.3] * 5})
expect(
    "one baseline: a control off by more than the margin makes it INCONCLUSIVE (exit 3), even with a route over",
    rc == 3 and verdicts(out) == ["INCONCLUSIVE"] and "control/cudaStream_t_again (1.030)" in out,
    out,
)
rc, out = judge({"route/cudaStream_t": r, "route/stream_view": [10.1] * 5, "control/cudaStream_t_again": [10.1] * 5})
expect("one baseline: a control within the margin lets the verdict stand", rc == 0 and "; controls 1.010" in out, out)
rc, out = judge(
    {"route/cudaStream_t": r, "route/stream_view": [10.1] * 5, "control/cudaStream_t_again": [10.15] * 5},
    "--control-tolerance",
    "0.01",
)
expect("one baseline: --control-tolerance 0.01 gates at 1% (a control of 1.015 is off)", rc == 3, out)
rc, out = judge({"route/stream_view": [10.1] * 5})
expect("one baseline: the baseline missing is a failed run (exit 2), not a verdict", rc == 2 and not targets(out), out)
rc, out = judge({"route/cudaStream_t": r, "route/stream_view": [10.0, 10.0, 10.0, 30.0, 30.0]})
expect("one baseline: medians, not means (two slow repetitions of five do not fail it)", rc == 0, out)

# --- rules: each comparison --------------------------------------------------------------------
rows = {"base": r, "equal": r, "faster": [5.0] * 5, "slower": [12.0] * 5, "control/base_again": [10.2] * 5}
rc, out = judge(rows, "--compare", "equal", "base", "<=", "1.0")
expect("'<=': a ratio equal to the target passes", rc == 0 and verdicts(out) == ["PASS"], out)
rc, out = judge(rows, "--compare", "equal", "base", "<", "1.0")
expect("'<': a ratio equal to the target fails", rc == 1 and verdicts(out) == ["FAIL"], out)
rc, out = judge(rows, "--compare", "faster", "base", "<", "1.0")
expect("'<': a ratio below the target passes", rc == 0 and verdicts(out) == ["PASS"], out)
rc, out = judge(rows, "--compare", "slower", "base", "<=", "1.1")
expect(
    "'<=': a ratio over the target fails, with its ratio",
    rc == 1 and "ratio 1.2000" in out and verdicts(out) == ["FAIL"],
    out,
)
rc, out = judge(rows, "--compare", "faster", "base", "faster>=", "2")
expect("'faster>=': a speedup equal to the target passes", rc == 0 and verdicts(out) == ["PASS"], out)
rc, out = judge(rows, "--compare", "faster", "base", "faster>=", "2.5")
expect("'faster>=': a smaller speedup fails", rc == 1 and verdicts(out) == ["FAIL"], out)
rc, out = judge(rows, "--compare", "slower", "base", "faster>=", "1")
expect("'faster>=': a slower row fails", rc == 1, out)
rc, out = judge(rows, "--compare", "equal", "base", "<=", "1.0", "--compare", "slower", "base", "<=", "1.1")
expect(
    "several rules: one FAIL fails the run, each has its verdict", rc == 1 and verdicts(out) == ["PASS", "FAIL"], out
)
rc, out = judge(rows, "--compare", "(faster|slower)", "base", "<=", "1.1")
expect("one rule over several rows: one verdict per row", rc == 1 and sorted(verdicts(out)) == ["FAIL", "PASS"], out)
rc, out = judge(rows, "--compare", "copy/(a|b)", "base", "<=", "1.0")
expect(
    "a rule whose rows are missing from the run fails (a claim cannot vanish)",
    rc == 1 and "FAIL (no such row in the run" in out,
    out,
)
rc, out = judge(rows, "--compare", "equal", "missing_base", "<=", "1.0")
expect("a rule whose baseline is missing fails", rc == 1 and "FAIL (baseline missing from the run)" in out, out)
rc, out = judge(rows, "--compare", "(equal)", "base", "<=", "1.0", "--compare", "row_(\\d)", "base_\\1", "<=", "1.0")
expect("a missing row fails even when another rule passes", rc == 1 and verdicts(out) == ["PASS", "FAIL"], out)
rc, out = judge(rows, "--compare", "slower", "base", "<=", "1.0", "--info", "faster", "base")
expect("--info rows are printed, not judged", "(info)" in out and verdicts(out) == ["FAIL"], out)
rc, out = judge(rows, "--compare", "equal", "base", "<=", "1.0", "--info", "slower", "base")
expect("an --info row however slow does not fail the run", rc == 0, out)
rc, out = judge(
    {"base": r, "pool/stream_pool::get+drop": [5.0] * 5},
    "--compare",
    "pool/stream_pool::get\\+drop",
    "base",
    "<=",
    "1.0",
    "--reference",
    "pool/.*",
    "4",
    "torch",
)
expect(
    "--reference lines are printed as REFERENCE, not TARGET, and not judged",
    rc == 0 and "REFERENCE fixture: pool/stream_pool::get+drop" in out and len(targets(out)) == 1,
    out,
)

rc, out = judge({"create/ours": [5.0] * 5}, "--versus", "create/ours", "5.2", "cuda.core", "<=", "1.0")
expect(
    "--versus: a row within an outside figure passes",
    rc == 0 and verdicts(out) == ["PASS"] and "vs cuda.core" in out,
    out,
)
rc, out = judge({"create/ours": [5.5] * 5}, "--versus", "create/ours", "5.2", "cuda.core", "<=", "1.0")
expect("--versus: a row over an outside figure fails", rc == 1 and verdicts(out) == ["FAIL"], out)
rc, out = judge({"create/ours": [5.0] * 5}, "--versus", "create/theirs", "5.2", "cuda.core", "<=", "1.0")
expect("--versus: a missing row fails", rc == 1 and "no such row" in out, out)
rc, out = judge(
    {"base": r, "control/base_again": [12.0] * 5, "create/ours": [5.0] * 5},
    "--versus",
    "create/ours",
    "5.2",
    "cuda.core",
    "<=",
    "1.0",
    "--control",
    "control/base_again",
    "base",
    "0.05",
)
expect("--versus: an off control makes it INCONCLUSIVE", rc == 3 and verdicts(out) == ["INCONCLUSIVE"], out)

# --- rules: control rows ------------------------------------------------------------------------
rc, out = judge(rows, "--compare", "slower", "base", "<=", "1.1", "--control", "control/base_again", "base", "0.01")
expect(
    "a control off by more than its tolerance: every verdict INCONCLUSIVE, exit 3 (a FAIL too)",
    rc == 3 and verdicts(out) == ["INCONCLUSIVE"] and "control off: control/base_again 1.020" in out,
    out,
)
rc, out = judge(rows, "--compare", "equal", "base", "<=", "1.0", "--control", "control/base_again", "base", "0.05")
expect("a control within its tolerance: the verdicts stand", rc == 0 and verdicts(out) == ["PASS"], out)
rc, out = judge(rows, "--compare", "equal", "base", "<=", "1.0", "--control", "control/absent", "base", "0.05")
expect("a control row missing from the run: INCONCLUSIVE, named", rc == 3 and "control/absent: no such row" in out, out)
rc, out = judge(rows, "--compare", "copy/none", "base", "<=", "1.0", "--control", "control/base_again", "base", "0.01")
expect("a missing judged row still fails under an off control", rc == 1 and "no such row" in out, out)

# --- rounds: the user counters of one row, each ratio the median of per-repetition ratios ---------
base = [10.0, 11.0, 12.0, 13.0, 14.0]  # the baseline drifting over the run, as the driver's does


def rounds(counters, row="rounds/creation"):
    """A run whose row `row` carries the counters, beside per-call rows named like them (slow ones:
    a rule that read the rows instead of the counters would fail)."""
    reps = len(next(iter(counters.values())))
    runs = {row: [2.0e6] * reps, "base": [10.0] * reps, "ours": [20.0] * reps}
    return runs, {"counters": {row: counters}}


def scaled(times, factor):
    return [t * factor for t in times]


ours_rule = ("--compare", "ours", "base", "<=", "1.05")
control_rule = ("--control", "control/base_again", "base", "0.01")
runs, kw = rounds({"base": base, "ours": scaled(base, 1.03), "control/base_again": scaled(base, 1.002)})
rc, out = judge(runs, "--rounds", "rounds/creation", *ours_rule, *control_rule, **kw)
expect(
    "--rounds: the counters are judged, not the rows of the same names: 1.03x passes",
    rc == 0 and verdicts(out) == ["PASS"] and "ratio 1.0300" in out and "median of 5 per-repetition ratios" in out,
    out,
)
rc, out = judge(runs, "--rounds", "rounds/.*", *ours_rule, *control_rule, **kw)
expect("--rounds: ROW may be a regex naming one row", rc == 0 and verdicts(out) == ["PASS"], out)
runs, kw = rounds({"base": base, "ours": scaled(base, 1.03)}, row="rounds/creation/real_time")
rc, out = judge(runs, "--rounds", "rounds/creation", *ours_rule, **kw)
expect(
    "--rounds: ROW may be a prefix naming one row (Google Benchmark appends /real_time)",
    rc == 0 and verdicts(out) == ["PASS"],
    out,
)
runs, kw = rounds({"base": base, "ours": scaled(base, 1.08), "control/base_again": scaled(base, 1.002)})
rc, out = judge(runs, "--rounds", "rounds/creation", *ours_rule, *control_rule, **kw)
expect("--rounds: 1.08x in every round fails", rc == 1 and verdicts(out) == ["FAIL"] and "ratio 1.0800" in out, out)
runs, kw = rounds({"base": base, "ours": scaled(base, 1.03), "control/base_again": scaled(base, 1.02)})
rc, out = judge(runs, "--rounds", "rounds/creation", *ours_rule, *control_rule, **kw)
expect(
    "--rounds: a control off by more than its tolerance makes it INCONCLUSIVE (exit 3)",
    rc == 3 and verdicts(out) == ["INCONCLUSIVE"] and "control off: control/base_again 1.020" in out,
    out,
)
# Each repetition 1.03x its own baseline, but the slow repetitions fall on other indices for the
# row than for the baseline: the ratio of the medians reads 1.236, the median of the ratios 1.03.
unpaired = {"base": [10.0, 10.0, 10.0, 12.0, 12.0], "ours": [10.3, 10.3, 12.36, 12.36, 12.36]}
runs, kw = rounds(unpaired)
rc, out = judge(runs, "--rounds", "rounds/creation", *ours_rule, "--info", "ours", "base", **kw)
expect(
    "--rounds: pairs the repetitions (median of the ratios 1.03, where the medians' ratio is 1.236)",
    rc == 0 and verdicts(out) == ["PASS"] and "ratio 1.0300" in out and "1.030  " in out,
    out,
)
rc, out = judge(unpaired, *ours_rule)
expect("the same times as rows, without --rounds: the ratio of medians, 1.236, fails", rc == 1, out)
runs, kw = rounds({"base": base, "ours": scaled(base, 1.03)[:4]})
rc, out = judge(runs, "--rounds", "rounds/creation", *ours_rule, **kw)
expect(
    "--rounds: a counter missing from one repetition is a failed run (exit 2): nothing to pair",
    rc == 2 and not targets(out) and "repetition 4 reports other counters" in out and "'ours'" in out,
    out,
)
runs, kw = rounds({"base": base, "ours": scaled(base, 1.03)})
rc, out = judge(runs, "--rounds", "rounds/creation", "--compare", "theirs", "base", "<=", "1.05", **kw)
expect("--rounds: a rule naming a counter the row lacks fails", rc == 1 and "FAIL (no such row" in out, out)
rc, out = judge(runs, "--rounds", "rounds/absent", *ours_rule, **kw)
expect(
    "--rounds: ROW missing from the run is a failed run (exit 2), named",
    rc == 2 and not targets(out) and "'rounds/absent'" in out,
    out,
)
rc, out = judge(runs, "--rounds", "base", *ours_rule, **kw)
expect(
    "--rounds: ROW without counters is a failed run (exit 2)",
    rc == 2 and not targets(out) and "no user counters" in out,
    out,
)
rc, out = judge(runs, "--rounds", "(base|ours)", *ours_rule, **kw)
expect("--rounds: a regex naming two rows is a failed run (exit 2)", rc == 2 and "exactly one row" in out, out)
rc, out = judge({}, "--rounds", "rounds/creation", *ours_rule, errors=["rounds/creation"])
expect("--rounds: a program that could not measure is a SKIP", rc == 77 and verdicts(out) == ["SKIP"], out)

# --- rounds over several processes: each ratio the median of the processes' paired ratios -------


def program_printing(runs_by_process):
    """An executable that prints, on its k-th run, the fixture run runs_by_process[k]: what
    --processes needs, as it runs the program itself."""
    directory = tempfile.mkdtemp(dir=tmp)
    for k, (runs, kw) in enumerate(runs_by_process):
        with open(os.path.join(directory, f"run{k}.json"), "w", encoding="utf-8") as f:
            f.write(dumps(runs, **kw))
    program = os.path.join(directory, "program")
    with open(program, "w", encoding="utf-8") as f:
        f.write(
            f"#!{sys.executable}\n"
            "import os, sys\n"
            "here = os.path.dirname(os.path.abspath(__file__))\n"
            "count = os.path.join(here, 'count')\n"
            "k = int(open(count).read()) if os.path.exists(count) else 0\n"
            "open(count, 'w').write(str(k + 1))\n"
            "sys.stdout.write(open(os.path.join(here, f'run{k}.json')).read())\n"
        )
    os.chmod(program, 0o755)
    return program


def judge_program(program, *args):
    done = subprocess.run(
        [sys.executable, script, program, "--name", "fixture", *args], capture_output=True, text=True, timeout=60
    )
    return done.returncode, done.stdout + done.stderr


one_each = [rounds({"base": base, "ours": scaled(base, f)}) for f in (1.03, 1.06, 1.04)]
rc, out = judge_program(program_printing(one_each), "--processes", "3", "--rounds", "rounds/creation", *ours_rule)
expect(
    "--processes: the median of the processes' ratios (1.03, 1.06, 1.04: 1.04) passes, each process shown",
    rc == 0 and verdicts(out) == ["PASS"] and "ratio 1.0400" in out and "per process 1.030, 1.060, 1.040" in out,
    out,
)
two_slow = [rounds({"base": base, "ours": scaled(base, f)}) for f in (1.03, 1.06, 1.07)]
rc, out = judge_program(program_printing(two_slow), "--processes", "3", "--rounds", "rounds/creation", *ours_rule)
expect("--processes: two processes of three over the target fail", rc == 1 and "ratio 1.0600" in out, out)
rc, out = judge(runs, "--processes", "2", "--rounds", "rounds/creation", *ours_rule, **kw)
expect("--processes with --from-json is a failed run (exit 2): there is no program to run again", rc == 2, out)
rc, out = judge_program(program_printing(one_each), "--processes", "3", *ours_rule)
expect("--processes without --rounds is a failed run (exit 2)", rc == 2 and "--rounds" in out, out)

# --- metrics and skips --------------------------------------------------------------------------
rc, out = judge(
    {"base": r, "row": r}, "--metric", "real_time", "--compare", "row", "base", "<=", "1.0", metric_scale={"row": 1.5}
)
expect("--metric real_time judges real time", rc == 1, out)
rc, out = judge({"base": r, "row": r}, "--compare", "row", "base", "<=", "1.0", metric_scale={"row": 1.5})
expect("the default metric is CPU time", rc == 0, out)
rc, out = judge({}, "--compare", "row", "base", "<=", "1.0", errors=["row", "base"])
expect(
    "every row reporting an error is a SKIP (exit 77), with the reason",
    rc == 77 and verdicts(out) == ["SKIP"] and "no CUDA device" in out,
    out,
)
rc, out = judge({"base": r}, "--compare", "row", "base", "<=", "1.0", errors=["row"])
expect(
    "one row reporting an error while others ran: its rule fails, naming the error",
    rc == 1 and "no such row" in out and "no CUDA device" in out,
    out,
)
rc, out = judge(rows, "--compare", "equal", "base", "~", "1.0")
expect("an unknown comparison is a failed run (exit 2)", rc == 2, out)

finish("ratios_test")
