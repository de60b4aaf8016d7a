#!/usr/bin/env python3
"""The streamlike package against what Python users call today, side by side in one run.

Targets (each a ratio of two statements' times per call, measured in the same rounds):
  StreamView(torch_stream)                >= 5x faster than cuda.core Device().create_stream(torch_stream)
  Stream.create() + drop                  <= 1.05x raw cudaStreamCreateWithPriority + cudaStreamDestroy
                                          called from a C extension function (_create_floor, built
                                          for the benchmarks in BUILD/bench/python; not in the package),
                                          and not slower than cuda.core dev.create_stream() + close()
  StreamPool.get()                        >= 10x faster than torch.cuda.Stream()
  streamlike.wait(a, b)                   >= 1.5x faster than cuda.core a.wait(b)

Each group runs in rounds: every round times each of its statements for a block of calls, in an
order shuffled per round (a fixed seed, so a run is reproducible). A ratio is the median over
rounds of the per-round ratio of the two statements' times, so a drift of the machine that moves
every statement of a round together cancels (the cost of creating a stream drifts over a run by
more than the create target's 5% margin). The printed ns per call are medians over rounds. The
create group runs many short rounds (--create-rounds of --create-calls calls); the others --repeat
rounds (of --number / 10 calls for the views, --create-number for the pool and wait). Each group also
times its baseline a second time under another name (a control row, "... again"): if the control's
ratio is off 1 by more than the target's tolerance (1% for the create target, 10% for the others),
the run could not tell the compared rows apart from noise and the target reads INCONCLUSIVE
instead of ok or MISSED, as bench/tools/run_all.sh judges the C++ benchmarks. Run on the GPU machine
with the package installed (pip install .) or on PYTHONPATH:

    python3 bench/python/bench_package.py --build-dir BUILD [--json out.json] [--check]

--check exits 1 if a target is missed, else 3 if one is inconclusive.
"""

import argparse
import gc
import json
import os
import platform
import random
import statistics
import sys
import timeit


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", default="b", help="meson build folder with the C floor module (default b)")
    p.add_argument("--number", type=int, default=100_000, help="calls per timing run (cheap statements)")
    p.add_argument(
        "--create-number", type=int, default=5_000, help="calls per round for the pool's and wait's statements"
    )
    p.add_argument("--repeat", type=int, default=11, help="rounds of the view, pool and wait groups")
    p.add_argument("--create-calls", type=int, default=200, help="calls per block of the create group's rounds")
    p.add_argument("--create-rounds", type=int, default=300, help="rounds of the create group")
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--check", action="store_true", help="exit 1 if a target is missed, 3 if one is inconclusive")
    return p.parse_args()


def load_floor(build_dir):
    """The raw create + destroy the create target is measured against: _create_floor.create_destroy,
    a bench-only extension module (bench/python/create_floor.cpp) built under build_dir."""
    folder = os.path.abspath(os.path.join(build_dir, "bench", "python"))
    sys.path.insert(0, folder)
    try:
        import _create_floor
    except ImportError as e:
        sys.exit(f"_create_floor not importable from {folder} ({e}); meson compile -C {build_dir} bench-create-floor")
    finally:
        sys.path.remove(folder)
    return _create_floor.create_destroy


def interleaved(stmts, env, number, rounds, after_block=None, seed=20261201):
    """{name: [ns per call in each round]}: every round times each statement for `number` calls, in
    an order shuffled per round; after_block runs, untimed, after each statement's block."""
    timers = {name: timeit.Timer(stmt, globals=env) for name, stmt in stmts.items()}
    samples = {name: [] for name in stmts}
    order = list(timers)
    shuffle = random.Random(seed)
    for t in timers.values():
        t.timeit(max(1, number // 10))  # warm up
    for _ in range(rounds):
        shuffle.shuffle(order)
        for name in order:
            gc.disable()
            try:
                samples[name].append(timers[name].timeit(number) / number * 1e9)
            finally:
                gc.enable()
            if after_block:
                after_block()
    return samples


def medians(samples):
    """{name: median ns per call over the rounds}."""
    return {name: statistics.median(v) for name, v in samples.items()}


def paired(samples, row, base):
    """The median over rounds of row's time / base's time in the same round."""
    return statistics.median(r / b for r, b in zip(samples[row], samples[base], strict=True))


def main():
    args = parse_args()
    import cuda.core as core
    import streamlike
    import torch

    raw = load_floor(args.build_dir)

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
        "raw": raw,
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
            "raw create + destroy (C function)": "raw()",
            "cuda.core dev.create_stream() + close()": "dev.create_stream().close()",
            "raw create + destroy (C function) again": "raw()",
        },
        env,
        args.create_calls,
        args.create_rounds,
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
    # (name, wanted, ratio, test, control baseline's group and name, tolerance); each ratio and
    # control the median of the per-round ratios
    targets = [
        (
            "StreamView(torch) vs cuda.core Device().create_stream(torch)",
            ">= 5x faster",
            paired(v, "cuda.core Device().create_stream(torch_stream)", "StreamView(torch_stream)"),
            lambda r: r >= 5.0,
            (v, "cuda.core Device().create_stream(torch_stream)"),
            0.10,
        ),
        (
            "Stream.create()+drop / raw create+destroy",
            "<= 1.05",
            paired(c, "Stream.create() + drop", "raw create + destroy (C function)"),
            lambda r: r <= 1.05,
            (c, "raw create + destroy (C function)"),
            0.01,
        ),
        (
            "cuda.core create+close / Stream.create()+drop",
            ">= 1.0 (not slower)",
            paired(c, "cuda.core dev.create_stream() + close()", "Stream.create() + drop"),
            lambda r: r >= 1.0,
            (c, "raw create + destroy (C function)"),
            0.10,
        ),
        (
            "torch.cuda.Stream() / StreamPool.get()",
            ">= 10x",
            paired(p, "torch.cuda.Stream()", "StreamPool.get()"),
            lambda r: r >= 10.0,
            (p, "torch.cuda.Stream()"),
            0.10,
        ),
        (
            "cuda.core wait / streamlike.wait",
            ">= 1.5x",
            paired(w, "cuda.core a.wait(b)", "streamlike.wait(a, b)"),
            lambda r: r >= 1.5,
            (w, "cuda.core a.wait(b)"),
            0.10,
        ),
    ]
    print(
        f"python {platform.python_version()}, torch {torch.__version__}, "
        f"cuda.core {getattr(core, '__version__', '?')}, GPU {torch.cuda.get_device_name(0)}"
    )
    ns_per_call = {key: medians(group) for key, group in results.items()}
    for key, group in ns_per_call.items():
        rounds = len(next(iter(results[key].values())))
        for name, ns in group.items():
            print(f"  {name:<56} {ns:10.1f} ns  (median of {rounds} rounds)")
    verdicts = []
    print("targets:")
    for name, want, ratio, test, (group, baseline), tolerance in targets:
        control = paired(group, baseline + " again", baseline)
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
            json.dump({"ns_per_call": ns_per_call, "targets": verdicts}, f, indent=1)
    failed = sum(t["verdict"] == "MISSED" for t in verdicts)
    inconclusive = sum(t["verdict"] == "INCONCLUSIVE" for t in verdicts)
    if not args.check:
        return 0
    return 1 if failed else 3 if inconclusive else 0


if __name__ == "__main__":
    sys.exit(main())
