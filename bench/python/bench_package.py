#!/usr/bin/env python3
"""The streamlike package against what Python users call today, side by side in one run.

Targets (each judged on the median statement time, in ns per call):
  StreamView(torch_stream)                >= 5x faster than cuda.core Device().create_stream(torch_stream)
  Stream.create() + drop                  <= 1.05x raw cudaStreamCreateWithPriority + cudaStreamDestroy
                                          called from the same module (_streamlike._raw_create_destroy),
                                          and not slower than cuda.core dev.create_stream() + close()
  StreamPool.get()                        >= 10x faster than torch.cuda.Stream()
  streamlike.wait(a, b)                   >= 1.5x faster than cuda.core a.wait(b)

Each number is the median over --repeat runs of --number calls (fewer for the statements that
create streams); the runs of the statements compared are interleaved round by round. Each group
also times its baseline a second time under another name (a control row, "... again"): if the two
differ by more than the target's tolerance (5% for the create target, whose margin is 5%; 10% for
the others), the run could not tell the compared rows apart from noise and the target reads
INCONCLUSIVE instead of ok or MISSED, as bench/tools/run_all.sh judges the C++ benchmarks. Run on the GPU
machine with the package installed (pip install .) or on PYTHONPATH:

    python3 bench/python/bench_package.py [--json out.json] [--check]

--check exits 1 if a target is missed, else 3 if one is inconclusive.
"""

import argparse
import gc
import json
import platform
import statistics
import sys
import timeit


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--number", type=int, default=100_000, help="calls per timing run (cheap statements)")
    p.add_argument("--create-number", type=int, default=5_000, help="calls per run for statements that create")
    p.add_argument("--repeat", type=int, default=11, help="timing runs; the median is reported")
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--check", action="store_true", help="exit 1 if a target is missed, 3 if one is inconclusive")
    return p.parse_args()


def interleaved(stmts, env, number, repeat, after_round=None):
    """{name: median ns per call}, the statements timed in turn each round."""
    timers = {name: timeit.Timer(stmt, globals=env) for name, stmt in stmts.items()}
    samples = {name: [] for name in stmts}
    for t in timers.values():
        t.timeit(max(1, number // 10))  # warm up
    for _ in range(repeat):
        for name, t in timers.items():
            gc.disable()
            try:
                samples[name].append(t.timeit(number) / number * 1e9)
            finally:
                gc.enable()
            if after_round:
                after_round()
    return {name: statistics.median(v) for name, v in samples.items()}


def main():
    args = parse_args()
    import cuda.core as core
    import streamlike
    import torch
    from streamlike import _streamlike

    dev = core.Device()
    dev.set_current()
    torch.cuda.init()
    ts = torch.cuda.Stream()
    a, b = streamlike.Stream.create(), streamlike.Stream.create()
    ca, cb = dev.create_stream(), dev.create_stream()
    pool = streamlike.StreamPool(16)
    env = {
        "streamlike": streamlike,
        "SV": streamlike.StreamView,
        "Stream": streamlike.Stream,
        "core": core,
        "dev": dev,
        "ts": ts,
        "torch": torch,
        "raw": _streamlike._raw_create_destroy,
        "pool": pool,
        "a": a,
        "b": b,
        "ca": ca,
        "cb": cb,
        "wait": streamlike.wait,
    }

    def sync_all():
        torch.cuda.synchronize()

    results = {}
    results["view"] = interleaved(
        {
            "StreamView(torch_stream)": "SV(ts)",
            "cuda.core Device().create_stream(torch_stream)": "core.Device().create_stream(ts)",
            "cuda.core dev.create_stream(torch_stream)": "dev.create_stream(ts)",
            "cuda.core Device().create_stream(torch_stream) again": "core.Device().create_stream(ts)",
        },
        env,
        args.number // 10,
        args.repeat,
    )
    results["create"] = interleaved(
        {
            "Stream.create() + drop": "Stream.create()",
            "raw create + destroy (same module)": "raw()",
            "cuda.core dev.create_stream() + close()": "dev.create_stream().close()",
            "raw create + destroy (same module) again": "raw()",
        },
        env,
        args.create_number,
        args.repeat,
        sync_all,
    )
    results["pool"] = interleaved(
        {
            "StreamPool.get()": "pool.get()",
            "torch.cuda.Stream()": "torch.cuda.Stream()",
            "torch.cuda.Stream() again": "torch.cuda.Stream()",
        },
        env,
        args.create_number,
        args.repeat,
        sync_all,
    )
    results["wait"] = interleaved(
        {
            "streamlike.wait(a, b)": "wait(a, b)",
            "cuda.core a.wait(b)": "ca.wait(cb)",
            "cuda.core a.wait(b) again": "ca.wait(cb)",
        },
        env,
        args.create_number,
        args.repeat,
        sync_all,
    )

    v, c, p, w = results["view"], results["create"], results["pool"], results["wait"]
    # (name, wanted, ratio, test, control baseline's group and name, tolerance)
    targets = [
        (
            "StreamView(torch) vs cuda.core Device().create_stream(torch)",
            ">= 5x faster",
            v["cuda.core Device().create_stream(torch_stream)"] / v["StreamView(torch_stream)"],
            lambda r: r >= 5.0,
            (v, "cuda.core Device().create_stream(torch_stream)"),
            0.10,
        ),
        (
            "Stream.create()+drop / raw create+destroy",
            "<= 1.05",
            c["Stream.create() + drop"] / c["raw create + destroy (same module)"],
            lambda r: r <= 1.05,
            (c, "raw create + destroy (same module)"),
            0.05,
        ),
        (
            "cuda.core create+close / Stream.create()+drop",
            ">= 1.0 (not slower)",
            c["cuda.core dev.create_stream() + close()"] / c["Stream.create() + drop"],
            lambda r: r >= 1.0,
            (c, "raw create + destroy (same module)"),
            0.10,
        ),
        (
            "torch.cuda.Stream() / StreamPool.get()",
            ">= 10x",
            p["torch.cuda.Stream()"] / p["StreamPool.get()"],
            lambda r: r >= 10.0,
            (p, "torch.cuda.Stream()"),
            0.10,
        ),
        (
            "cuda.core wait / streamlike.wait",
            ">= 1.5x",
            w["cuda.core a.wait(b)"] / w["streamlike.wait(a, b)"],
            lambda r: r >= 1.5,
            (w, "cuda.core a.wait(b)"),
            0.10,
        ),
    ]
    print(
        f"python {platform.python_version()}, torch {torch.__version__}, "
        f"cuda.core {getattr(core, '__version__', '?')}, GPU {torch.cuda.get_device_name(0)}"
    )
    for group in results.values():
        for name, ns in group.items():
            print(f"  {name:<56} {ns:10.1f} ns")
    verdicts = []
    print("targets:")
    for name, want, ratio, test, (group, baseline), tolerance in targets:
        control = group[baseline + " again"] / group[baseline]
        if abs(control - 1) > tolerance:
            verdict = "INCONCLUSIVE"
        else:
            verdict = "ok" if test(ratio) else "MISSED"
        verdicts.append(
            {"name": name, "want": want, "ratio": ratio, "control": control, "tolerance": tolerance, "verdict": verdict}
        )
        print(
            f"  {name:<62} {ratio:7.2f}  (want {want})  {verdict}  (control {control:.3f}, "
            f"|control - 1| <= {tolerance})"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"ns_per_call": results, "targets": verdicts}, f, indent=1)
    failed = sum(t["verdict"] == "MISSED" for t in verdicts)
    inconclusive = sum(t["verdict"] == "INCONCLUSIVE" for t in verdicts)
    if not args.check:
        return 0
    return 1 if failed else 3 if inconclusive else 0


if __name__ == "__main__":
    sys.exit(main())
