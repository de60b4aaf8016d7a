#!/usr/bin/env python3
"""Counts the instructions each benchmark of get_stream_routes executes per iteration, route by
route, against the baseline (the raw cudaStream_t through the same generic edge,
route/cudaStream_t) and the plain function (diag/cudaStream_t->plain_function).

    bench/tools/instruction_counts.py build/bench/get_stream_routes            # static, from objdump
    bench/tools/instruction_counts.py build/bench/get_stream_routes --show     # ... and the edges' code
    bench/tools/instruction_counts.py build/bench/get_stream_routes --callgrind  # measured, valgrind

Static (default): disassembles the program (objdump -d --no-show-raw-insn -C) and, for each
benchmark loop in namespace bench_routes, counts

    loop       the instructions of the innermost loop around the call to the edge, divided by
               the number of edge calls in it (a compiler may put two calls in one pass);
    edge       the out-of-line edge instantiation (api_edge<S&>, api_edge_by_value<S>,
               api_edge_raw, api_edge_raw_ref), from its symbol size, so padding is left out;
    consumer   consume or consume_raw, which the edge calls.

It is deterministic and needs only binutils, but it assumes the edge and the consumer run
straight through (no branch inside; checked: a row says "branches" otherwise) and that the loop
is a plain counted loop, which is what Google Benchmark's `for (auto _ : state)` compiles to.

Callgrind (--callgrind): runs the program under valgrind and divides, per benchmark loop, the
instructions executed in the loop function and everything it called through the edge by the
number of edge calls. It assumes nothing about the code's shape; it is slower (seconds, not
milliseconds) and includes a tiny share of per-run setup (the loop function's prologue), hence
the decimals.

Exit status: 0 when every route/ row executes what route/cudaStream_t (the raw handle through
the same generic edge, the baseline) executes, so get_stream adds nothing, and every by_value/
row what the plain function (diag/cudaStream_t->plain_function) executes; 1 otherwise; 2 when
the program cannot be read or run. How route/ compares with the plain function is printed, not
judged: an out-of-line S&& edge loads the handle through the reference, which is the signature's
cost, not get_stream's (RESULTS.md).

The last line starts with TARGET (for bench/tools/run_all.sh): the verdict in one line.
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile


def die(message):
    """The run itself failed (not a verdict): exit status 2."""
    print("instruction_counts.py: " + message, file=sys.stderr)
    sys.exit(2)


NS = "bench_routes::"
BASELINE = "route/cudaStream_t"  # the raw handle through the same generic edge
PLAIN = "diag/cudaStream_t->plain_function"  # a plain function on the raw handle, by value

# Demangled stream types, as objdump and valgrind spell them, to the names the benchmark prints.
TYPE_LABELS = [
    (re.compile(r"^CUstream_st\*$"), "cudaStream_t"),
    (re.compile(r"^streamlike::stream_view$"), "stream_view"),
    (re.compile(r"^cuda::(\w+::)*stream_ref$"), "cuda::stream_ref"),
    (re.compile(r"^bench_routes::tag_invoke_stream$"), "tag_invoke_friend"),
    (re.compile(r"^bench_routes::member_get_stream_stream$"), "member_get_stream"),
    (re.compile(r"^bench_routes::member_stream_stream$"), "member_stream"),
    (re.compile(r"^bench_routes::rmm_like_stream$"), "rmm_like_both_conversions"),
]


def type_label(t):
    t = t.strip().rstrip("&").strip()
    for pattern, label in TYPE_LABELS:
        if pattern.match(t):
            return label
    return t


def bench_name(loop_fn):
    """The benchmark a loop function runs, from its demangled name; None if it is no loop."""
    if re.match(rf"^(void )?{NS}plain_function_loop\(", loop_fn):
        return "diag/cudaStream_t->plain_function"
    if re.match(rf"^(void )?{NS}raw_ref_loop\(", loop_fn):
        return "diag/cudaStream_t&->plain_function"
    m = re.match(rf"^(?:void )?{NS}(route_loop|by_value_loop)<(.*)>\(benchmark::State&", loop_fn)
    if m:
        family = "route" if m.group(1) == "route_loop" else "by_value"
        return f"{family}/{type_label(m.group(2))}"
    return None


def is_edge(fn):
    return re.match(rf"^(void )?{NS}api_edge(_raw|_raw_ref|_by_value)?[<(]", fn) is not None


def is_consumer(fn):
    return re.match(rf"^(void )?{NS}consume(_raw)?\(", fn) is not None


def order_key(name):
    family, _, label = name.partition("/")
    families = ["diag", "route", "by_value"]
    labels = [label for _, label in TYPE_LABELS]
    rank = families.index(family) if family in families else len(families)
    # diag/ rows first, then each route's route/ and by_value/ rows together.
    return (min(rank, 1), labels.index(label) if label in labels else len(labels), rank, name)


def run(cmd):
    try:
        return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        die(f"{' '.join(cmd)} failed: {e}")


# ---- static ----------------------------------------------------------------------------------

Insn = collections.namedtuple("Insn", "addr mnemonic operands")


def disassemble(binary):
    """{function name: [Insn]}, each function cut to its symbol size (no alignment padding)."""
    sizes = {}
    for line in run(["nm", "-S", "--defined-only", binary]).splitlines():
        parts = line.split(maxsplit=3)
        if len(parts) == 4 and parts[2] in "tTwW":
            sizes[int(parts[0], 16)] = int(parts[1], 16)
    functions, current, start = {}, None, 0
    for line in run(["objdump", "-d", "--no-show-raw-insn", "-C", binary]).splitlines():
        m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
        if m:
            start, current = int(m.group(1), 16), m.group(2)
            functions[current] = []
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m and current is not None:
            addr = int(m.group(1), 16)
            if start in sizes and addr >= start + sizes[start]:
                continue  # alignment padding after the function's end
            functions[current].append(Insn(addr, m.group(2), m.group(3)))
    return functions


def branch_target(insn):
    """(address, symbol) of a direct call or jump, else None."""
    m = re.match(r"^([0-9a-f]+) <(.*?)(\+0x[0-9a-f]+)?>$", insn.operands)
    if m and (insn.mnemonic.startswith("j") or insn.mnemonic.startswith("call")):
        return int(m.group(1), 16), m.group(2)
    return None


def has_branches(insns):
    """True if the code has a conditional or internal jump (then it may not run straight through)."""
    return any(i.mnemonic.startswith("j") and i.mnemonic != "jmp" for i in insns)


def callee(insns, predicate):
    for i in insns:
        t = branch_target(i)
        if t and predicate(t[1]):
            return t[1]
    return None


def static_counts(binary, show):
    functions = disassemble(binary)
    rows = {}
    for fn, insns in functions.items():
        name = bench_name(fn)
        if not name:
            continue
        calls = [i for i in insns if (t := branch_target(i)) and i.mnemonic.startswith("call") and is_edge(t[1])]
        if not calls:
            continue
        edge = branch_target(calls[0])[1]
        # The innermost loop around an edge call: a backward jump that lands at or before the call.
        # (A compiler may peel the first iteration, so the first call can be outside the loop.)
        loops = [
            (t[0], i.addr)
            for i in insns
            for c in calls
            if i.mnemonic.startswith("j") and (t := branch_target(i)) and t[0] <= c.addr < i.addr
        ]
        if loops:
            lo, hi = min(loops, key=lambda r: r[1] - r[0])
            body = [i for i in insns if lo <= i.addr <= hi]
            edge_calls = sum(1 for i in body if i in calls)
            loop = len(body) / edge_calls
        else:
            loop = float("nan")
        edge_insns = functions.get(edge, [])
        consumer = callee(edge_insns, is_consumer)
        consumer_insns = functions.get(consumer, [])
        note = "branches" if has_branches(edge_insns) or has_branches(consumer_insns) else ""
        rows[name] = dict(
            loop=loop,
            edge=len(edge_insns),
            consumer=len(consumer_insns),
            total=loop + len(edge_insns) + len(consumer_insns),
            edge_fn=edge,
            consumer_fn=consumer,
            note=note,
            edge_insns=edge_insns,
        )
    if not rows:
        die(f"no benchmark loops of namespace {NS} in {binary}")

    base = rows.get(BASELINE)
    print("static count (objdump -d --no-show-raw-insn -C); per iteration = loop + edge + consumer")
    header = ("benchmark", "loop", "edge", "consumer", "total", f"vs {BASELINE}", "edge function")
    table = []
    for name in sorted(rows, key=order_key):
        r = rows[name]
        delta = f"{r['total'] - base['total']:+g}" if base else "?"
        table.append(
            (
                name,
                f"{r['loop']:g}",
                str(r["edge"]),
                str(r["consumer"]),
                f"{r['total']:g}",
                delta,
                r["edge_fn"] + (f"  [{r['note']}]" if r["note"] else ""),
            )
        )
    print_table(header, table)
    if show:
        # Group the edges by their code (call targets left out): identical code is shown once.
        groups = collections.OrderedDict()
        for name in sorted(rows, key=order_key):
            r = rows[name]
            code = tuple((i.mnemonic, re.sub(r"^[0-9a-f]+ <(.*)>$", r"<\1>", i.operands)) for i in r["edge_insns"])
            groups.setdefault(code, [])
            if r["edge_fn"] not in groups[code]:
                groups[code].append(r["edge_fn"])
        for code, fns in groups.items():
            print(f"\n{len(fns)} edge function(s) with this code:")
            for fn in fns:
                print(f"  {fn}")
            for mnemonic, operands in code:
                print(f"      {mnemonic:6} {operands}")
    return {n: r["total"] for n, r in rows.items()}


# ---- callgrind --------------------------------------------------------------------------------


def parse_callgrind(path):
    """Self cost per function, and (count, inclusive cost) per caller -> callee, from a callgrind
    output file (event Ir only)."""
    names, self_cost = {}, collections.Counter()
    calls = collections.defaultdict(lambda: [0, 0])

    def name_of(spec):
        m = re.match(r"^\((\d+)\)(?: (.*))?$", spec)
        if not m:
            return spec
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names[m.group(1)]

    fn = cfn = None
    pending_call = None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("fn="):
                fn = name_of(line[3:])
            elif line.startswith("cfn="):
                cfn = name_of(line[4:])
            elif line.startswith("calls="):
                pending_call = int(line[6:].split()[0])
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                cost = sum(int(x) for x in line.split()[1:])
                if pending_call is not None:
                    c = calls[(fn, cfn)]
                    c[0] += pending_call
                    c[1] += cost
                    pending_call = None
                else:
                    self_cost[fn] += cost
    return self_cost, calls


def callgrind_counts(binary, min_time):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        cmd = [
            "valgrind",
            "--tool=callgrind",
            "--dump-instr=no",
            f"--callgrind-out-file={out}",
            binary,
            f"--benchmark_min_time={min_time}",
            "--benchmark_repetitions=1",
        ]
        print("command:", " ".join(cmd), file=sys.stderr)
        try:
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, subprocess.CalledProcessError) as e:
            die(f"{' '.join(cmd)} failed: {e}")
        self_cost, calls = parse_callgrind(out)
    rows = {}
    for (caller, called), (count, inclusive) in calls.items():
        name = bench_name(caller)
        if name and is_edge(called) and count:
            # The loop's own instructions (setup included, amortized) plus all it ran in the edge.
            rows[name] = (self_cost[caller] + inclusive) / count
    if not rows:
        die("callgrind saw no benchmark loop call an edge")
    base = rows.get(BASELINE)
    print(f"measured (callgrind, instructions per iteration, min_time {min_time} s per benchmark)")
    table = [(n, f"{rows[n]:.3f}", f"{rows[n] - base:+.3f}" if base else "?") for n in sorted(rows, key=order_key)]
    print_table(("benchmark", "instructions", f"vs {BASELINE}"), table)
    return rows


# ---- common -----------------------------------------------------------------------------------


def print_table(header, rows):
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(len(header))]

    def fmt(cells):
        return "  ".join(
            c.ljust(w) if i in (0, len(cells) - 1) else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=False))
        )

    print(fmt(header).rstrip())
    for r in rows:
        print(fmt(r).rstrip())


def verdict(totals, tolerance, how):
    """Two claims. (1) get_stream adds nothing: every route/ executes what route/cudaStream_t (the
    raw handle through the same generic edge, the baseline) executes. (2) Nor does the generic
    edge itself: every by_value/ executes what the plain function executes. The difference
    between route/ and the plain function (how an out-of-line S&& receives its argument) is
    printed above, not judged."""
    bad = []
    for family, reference in (("route/", BASELINE), ("by_value/", PLAIN)):
        ref = totals.get(reference)
        if ref is None:
            bad.append(f"{reference} not found")
            continue
        for name, total in totals.items():
            if name.startswith(family) and abs(total - ref) > tolerance:
                bad.append(f"{name} ({total:g}) != {reference} ({ref:g})")
    if bad:
        print("DIFFERENT: " + "; ".join(bad))
        print(
            f"TARGET get_stream_routes instructions ({how}): every route/ == {BASELINE}, every by_value/ == "
            f"{PLAIN}: FAIL"
        )
        return 1
    print(
        f"SAME: every route/ executes what {BASELINE} executes (get_stream adds nothing), and every "
        f"by_value/ what {PLAIN} executes"
    )
    print(
        f"TARGET get_stream_routes instructions ({how}): every route/ == {BASELINE} "
        f"({totals[BASELINE]:g}), every by_value/ == {PLAIN} ({totals[PLAIN]:g}): PASS"
    )
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("binary")
    p.add_argument("--show", action="store_true", help="print each edge instantiation's instructions")
    p.add_argument("--callgrind", action="store_true", help="count executed instructions with valgrind instead")
    p.add_argument("--min-time", type=float, default=0.01, help="with --callgrind: seconds per benchmark")
    args = p.parse_args()
    if args.callgrind:
        return verdict(callgrind_counts(args.binary, args.min_time), tolerance=0.05, how="callgrind")
    return verdict(static_counts(args.binary, args.show), tolerance=0, how="static")


if __name__ == "__main__":
    sys.exit(main())
