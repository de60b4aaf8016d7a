#!/usr/bin/env python3
"""Cost of handing an owning stream from one extension module to another's shared_stream parameter.

A streamlike.Stream made by one bridge module (nanobind or pybind11: test/bridge/owned_stream_*.cpp,
built -O2 with NDEBUG by bench/python/meson.build) is passed to the other module's function whose
parameter is a shared_stream, dropped when the call returns:
    capsule   the shared_stream caster takes an owning reference through __cuda_stream_owned__()
              (a "cuda_stream_owned" capsule: docs/owned-stream-abi.md); no Python object is kept;
    borrowed  the same object read through __cuda_stream__ with a strong reference kept to it (what
              the caster does for objects without __cuda_stream_owned__), through a function that
              takes the object and runs that path (owned_stream_functions.hpp, take_borrowed).
Target: capsule <= 1.5x borrowed, same run (judged on the measured statement times; the table also
shows them net of timeit's loop overhead).

Then it shows where the last drop can happen: each path's shared_stream is dropped on a new C++
thread while the Python thread keeps the GIL. The capsule's drop finishes (it takes no GIL); the
borrowed one cannot until the GIL is released (it must decref the Python object).

Run on the GPU machine after building (from the repository root):
    meson setup build-py -Dpython=enabled && meson compile -C build-py
    python3 bench/python/bench_owned_stream.py --build-dir build-py [--json out.json] [--check]
Without a GPU (or with --fake) the stream is a fake handle made through the same C ABI.
"""

import argparse
import json
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_stream_arg import measure  # noqa: E402  (the same interleaved timing)

MAX_RATIO = 1.5
MODULES = {"nanobind": "streamlike_owned_nb_test", "pybind11": "streamlike_owned_pb_test"}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", default="build-py")
    p.add_argument("--fake", action="store_true", help="a fake handle even where a GPU is present")
    p.add_argument("--number", type=int, default=200_000)
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--cpu", type=int, default=None, help="pin the process to this CPU while timing")
    p.add_argument("--json")
    p.add_argument("--check", action="store_true", help="exit 1 if the target is missed")
    return p.parse_args()


def main():
    args = parse_args()
    sys.path.insert(0, os.path.abspath(os.path.join(args.build_dir, "bench", "python")))  # bench/python/meson.build
    modules = {b: __import__(n) for b, n in MODULES.items()}
    streams = {}
    for binding, m in modules.items():
        kind = "fake"
        s = None
        if not args.fake:
            try:
                s = m.make_stream()  # shared_stream::create()
                kind = "cuda"
            except RuntimeError as e:
                print(f"note: no CUDA stream ({e}); using a fake handle")
        streams[binding] = (s if s is not None else m.make_fake_stream(0x5000), kind)

    namespace = {}
    statements = {"empty statement (timeit loop overhead)": "pass"}
    pairs = [("nanobind", "pybind11"), ("pybind11", "nanobind")]
    for producer, consumer in pairs:
        s, kind = streams[producer]
        c = modules[consumer]
        namespace[f"s_{producer}"] = s
        namespace[f"{consumer}_take_shared"] = c.take_shared
        namespace[f"{consumer}_take_borrowed"] = c.take_borrowed
        c.hold(s)  # the paths timed really work
        assert c.held_handle() == s.handle and s.use_count == 2
        c.release_held()
        statements[f"{producer} Stream -> {consumer} shared_stream: capsule"] = f"{consumer}_take_shared(s_{producer})"
        statements[f"{producer} Stream -> {consumer} shared_stream: borrowed"] = (
            f"{consumer}_take_borrowed(s_{producer})"
        )

    if args.cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})
    rows = measure(statements, namespace, args.number, args.repeat)
    loop = rows["empty statement (timeit loop overhead)"]

    print()
    print(
        f"Python {platform.python_version()}, streams: {', '.join(f'{b} {k}' for b, (_, k) in streams.items())}; "
        f"median of {args.repeat} interleaved runs x {args.number} calls"
    )
    print()
    print("| hand-off | capsule ns/call | borrowed ns/call | capsule / borrowed | net of loop | target |")
    print("|---|---:|---:|---:|---:|---|")
    results = {"python": platform.python_version(), "loop_ns": loop, "pairs": []}
    misses = []
    for producer, consumer in pairs:
        cap = rows[f"{producer} Stream -> {consumer} shared_stream: capsule"]
        bor = rows[f"{producer} Stream -> {consumer} shared_stream: borrowed"]
        ratio, net = cap / bor, (cap - loop) / (bor - loop)
        ok = ratio <= MAX_RATIO
        if not ok:
            misses.append(f"{producer} -> {consumer}: {ratio:.2f}x > {MAX_RATIO}x")
        print(
            f"| {producer} -> {consumer} | {cap:.1f} | {bor:.1f} | {ratio:.2f}x | {net:.2f}x | "
            f"<= {MAX_RATIO}x: {'met' if ok else 'MISSED'} |"
        )
        results["pairs"].append(
            {
                "producer": producer,
                "consumer": consumer,
                "capsule_ns": cap,
                "borrowed_ns": bor,
                "ratio": ratio,
                "ratio_net": net,
                "met": ok,
            }
        )
    print(f"\n(empty statement: {loop:.1f} ns)")

    # The last drop: on a C++ thread, while this thread keeps the GIL.
    print("\nlast drop on a new C++ thread while the Python thread holds the GIL (finished without it?):")
    gil = {}
    for producer, consumer in pairs:
        s, _ = streams[producer]
        c = modules[consumer]
        c.hold(s)  # capsule
        capsule_free = c.drop_held_on_thread_keeping_gil(2.0)

        class Borrowed:  # the borrowed path: an object with __cuda_stream__ only
            def __cuda_stream__(self, _h=s.handle):
                return (0, _h)

        c.hold(Borrowed())
        borrowed_free = c.drop_held_on_thread_keeping_gil(0.5)
        print(
            f"  {producer} -> {consumer}: capsule {'yes' if capsule_free else 'NO'}, "
            f"borrowed {'yes' if borrowed_free else 'no (needed the GIL)'}"
        )
        gil[f"{producer}->{consumer}"] = {"capsule_without_gil": capsule_free, "borrowed_without_gil": borrowed_free}
        if not capsule_free:
            misses.append(f"{producer} -> {consumer}: the capsule's last drop waited for the GIL")
    results["last_drop"] = gil

    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    if misses:
        print("\nMISSED: " + "; ".join(misses))
        return 1 if args.check else 0
    print("\nall targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
