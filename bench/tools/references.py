#!/usr/bin/env python3
"""Measures what Python's stream libraries pay for the operations the GPU benchmarks time, so that
bench/tools/run_all.sh can print them beside ours from the same run (not judged: a Python call also
pays the interpreter).

    bench/tools/references.py [--json FILE] [--number N] [--repeat R] [--require LIB ...]

Figures (ns per operation, the median of R timeit runs of N operations each):
    cuda.core.create+close   dev.create_stream() then stream.close(): an owned stream made and
                             destroyed (cuda.core calls cuStreamCreate/cuStreamDestroy)
    cuda.core.wait           s1.wait(s2): one stream waits for another (cuda.core records an event
                             on s2 and makes s1 wait for it)
    torch.create+drop        torch.cuda.Stream() then dropping it (torch hands out streams from its
                             own pool: no CUDA stream is created or destroyed)
    torch.wait_stream        s1.wait_stream(s2): event record + wait, as cuda.core's wait

A library that does not import, or finds no device, gives null with the reason. Exit status: 0;
1 if a library named by --require gave no figure; 77 if no library found a device (printed).
"""

import argparse
import json
import statistics
import sys
import timeit

SKIP = 77


def measure(stmt, setup_globals, number, repeat):
    timer = timeit.Timer(stmt, globals=setup_globals)
    timer.timeit(number=max(10, number // 10))  # warm up
    return statistics.median(timer.timeit(number=number) for _ in range(repeat)) / number * 1e9


def cuda_core_figures(number, repeat):
    try:
        from cuda.core import Device
    except ImportError:
        try:
            from cuda.core.experimental import Device
        except ImportError as e:
            raise RuntimeError(f"cuda.core does not import: {e}") from e
    dev = Device(0)
    dev.set_current()
    s1, s2 = dev.create_stream(), dev.create_stream()
    g = {"dev": dev, "s1": s1, "s2": s2}
    figures = {
        "cuda.core.create+close": measure("dev.create_stream().close()", g, number, repeat),
        "cuda.core.wait": measure("s1.wait(s2)", g, number * 10, repeat),
    }
    dev.sync()
    return figures


def torch_figures(number, repeat):
    try:
        import torch
    except ImportError as e:
        raise RuntimeError(f"torch does not import: {e}") from e
    if not torch.cuda.is_available():
        raise RuntimeError("torch finds no CUDA device")
    torch.cuda.init()
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    g = {"torch": torch, "s1": s1, "s2": s2}
    figures = {
        "torch.create+drop": measure("torch.cuda.Stream()", g, number, repeat),
        "torch.wait_stream": measure("s1.wait_stream(s2)", g, number * 10, repeat),
    }
    torch.cuda.synchronize()
    return figures


LIBRARIES = {"cuda.core": cuda_core_figures, "torch": torch_figures}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", help="write the figures here")
    p.add_argument("--number", type=int, default=2000, help="operations per timing run (x10 for waits)")
    p.add_argument("--repeat", type=int, default=7, help="timing runs; the median is reported")
    p.add_argument(
        "--require",
        action="append",
        default=[],
        choices=sorted(LIBRARIES),
        help="exit 1 if this library gives no figure (repeatable)",
    )
    args = p.parse_args()
    result = {"figures": {}, "missing": {}}
    for lib, fn in LIBRARIES.items():
        try:
            for name, ns in fn(args.number, args.repeat).items():
                result["figures"][name] = ns
                print(f"REFERENCE-FIGURE {name} {ns:.1f}")
        except Exception as e:  # noqa: BLE001 - any failure of a library is reported as its reason
            result["missing"][lib] = f"{type(e).__name__}: {e}"
            print(f"REFERENCE-MISSING {lib}: {type(e).__name__}: {e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    missing_required = [lib for lib in args.require if lib in result["missing"]]
    if missing_required:
        print("references: required but not measured: " + ", ".join(missing_required), file=sys.stderr)
        return 1
    return 0 if result["figures"] else SKIP


if __name__ == "__main__":
    sys.exit(main())
