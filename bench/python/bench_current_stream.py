#!/usr/bin/env python3
"""What asking for the current stream costs, and entering a `use` block, with torch loaded.

Targets (medians, ns per call):
  C++ streamlike::current_stream()          <= 100 ns with torch's provider loaded (timed in a C++
                                            loop of the current-stream test module, built as
                                            bench/python builds it), inside torch.cuda.stream(s)
                                            and outside any stream block
  the same                                  >= 20x faster than torch.cuda.current_stream().cuda_stream
                                            from Python
  streamlike.current_stream()               >= 10x faster than torch.cuda.current_stream()
  with streamlike.use(s): pass              <= 1500 ns with three providers (streamlike's own,
                                            torch and tvm-ffi; tvm-ffi must import)
  the same / with torch.cuda.stream(s): pass
                                            <= 1.0: making a stream current in every framework
                                            costs no more than torch's own block (timed beside
                                            it, with its own control row)
  per mix of providers, each in a process of its own (--mix, below): none (torch imported for
  the baseline, its provider unregistered), torch, cupy, tvm-ffi, all (torch, CuPy and tvm-ffi)
    with streamlike.use(v): pass            <= 1500 ns (v: a StreamView of a torch stream s)
    the same / with torch.cuda.stream(s): pass   < 1.0: faster than torch's own block
    and in the mix all, with streamlike.use(s): pass (s itself: torch's object made current too)
                                            <= 1500 ns and < 1.0 of torch's block
Shown beside them, not judged: the C++ scoped_current_stream loop, the use block on a StreamView
of the same stream (what a torch object adds: its __cuda_stream__ read, and torch's own object
made current), and the use block once CuPy is imported (its provider runs Python code).

Python statements are timed with timeit, interleaved round by round; each Python comparison also
times its baseline a second time (a control row, "... again"): if the two differ by more than 10%
the run could not tell the rows apart from noise and the target reads INCONCLUSIVE. Run on the
GPU machine with the package installed (pip install .) or on PYTHONPATH, after building the
benchmark modules (meson compile -C BUILD python-bench-modules):

    python3 bench/python/bench_current_stream.py --build-dir BUILD [--json out.json] [--check]

--check exits 1 if a target is missed (or could not be measured), else 3 if one is inconclusive.
"""

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import timeit

CPP_MAX_NS = 100.0
CPP_MIN_SPEEDUP = 20.0
PY_MIN_SPEEDUP = 10.0
USE_MAX_NS = 1500.0
USE_VS_TORCH_MAX = 1.0
CONTROL_TOLERANCE = 0.10


# The providers each mix leaves registered (besides streamlike's own), and the frameworks it imports.
MIXES = {
    "none": set(),
    "torch": {"torch"},
    "cupy": {"cupy"},
    "tvm-ffi": {"tvm-ffi"},
    "all": {"torch", "cupy", "tvm-ffi"},
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", default="build-py", help="meson build folder with bench/python/ (default build-py)")
    p.add_argument("--number", type=int, default=100_000, help="calls per timing run")
    p.add_argument("--repeat", type=int, default=11, help="timing runs; the median is reported")
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--check", action="store_true", help="exit 1 if a target is missed, 3 if one is inconclusive")
    p.add_argument("--mix", choices=sorted(MIXES), help="(a child) time use() with only these providers; print JSON")
    return p.parse_args()


def unregister(streamlike, name):
    """Removes a provider through the package's C table (streamlike/c/current_stream_provider.h),
    reached through the package's C API as test/package/package_c_api.py reads it."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "package"))
    import package_c_api

    return package_c_api.current_stream_api(streamlike).unregister_provider(name.encode()) == 0


def mix_child(args):
    """One mix, in this process: {"providers", "rows"} as JSON on stdout, or a reason and 77."""
    import torch

    wanted = MIXES[args.mix]
    try:
        if "cupy" in wanted:
            import cupy
        if "tvm-ffi" in wanted:
            import tvm_ffi  # noqa: F401
    except ImportError as e:
        print(json.dumps({"missing": f"mix {args.mix}: {e}"}))
        return 77
    import streamlike

    streamlike.current_stream_providers()  # finds torch and tvm-ffi, registers CuPy's
    if "torch" not in wanted:
        unregister(streamlike, "torch")  # imported for the baseline only
    providers = streamlike.current_stream_providers()
    if set(providers) - {"streamlike"} != wanted:
        print(json.dumps({"missing": f"mix {args.mix}: the providers are {providers}"}))
        return 77
    s = torch.cuda.Stream()
    env = {"torch": torch, "sl": streamlike, "s": s, "v": streamlike.StreamView(s)}
    stmts = {
        "use(v)": "with sl.use(v): pass",
        "torch block": "with torch.cuda.stream(s): pass",
        "torch block again": "with torch.cuda.stream(s): pass",
    }
    if args.mix == "all":
        stmts["use(s)"] = "with sl.use(s): pass"
    if "cupy" in wanted:
        # CuPy's own block on a stream of its own: what any block that makes a stream current in
        # CuPy pays at least (shown, not judged).
        env["cs"] = cupy.cuda.Stream(non_blocking=True)
        stmts["cupy block"] = "with cs: pass"
    rows = interleaved(stmts, env, args.number, args.repeat)
    print(json.dumps({"providers": providers, "rows": rows}))
    return 0


def run_mixes(args):
    """{mix: the child's JSON}, each mix timed in a process of its own."""
    import subprocess

    out = {}
    for mix in MIXES:
        done = subprocess.run(
            [
                sys.executable,
                os.path.abspath(__file__),
                "--mix",
                mix,
                "--number",
                str(args.number // 10),
                "--repeat",
                str(args.repeat),
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        try:
            out[mix] = json.loads(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            out[mix] = {"missing": f"mix {mix}: exit {done.returncode}: {done.stderr.strip()[-500:]}"}
    return out


def interleaved(stmts, env, number, repeat):
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
    return {name: statistics.median(v) for name, v in samples.items()}


def cpp_median(f, repeat):
    f()  # warm up
    return statistics.median(f() for _ in range(repeat))


def main():
    args = parse_args()
    if args.mix:
        return mix_child(args)
    missing = []
    try:
        import torch
    except ImportError as e:
        print(f"torch does not import ({e}): nothing to compare with")
        return 1 if args.check else 77
    if not torch.cuda.is_available():
        print("torch sees no GPU")
        return 1 if args.check else 77
    try:
        import tvm_ffi  # noqa: F401  (loaded: its provider is found)
    except ImportError as e:
        missing.append(f"tvm_ffi does not import ({e}): the use target needs three providers")
    import streamlike

    folder = os.path.abspath(os.path.join(args.build_dir, "bench", "python"))
    sys.path.insert(0, folder)
    try:
        module = __import__("streamlike_current_nb_test")
    except ImportError as e:
        print(f"the benchmark module streamlike_current_nb_test is not built in {folder} ({e})")
        return 1 if args.check else 77

    s = torch.cuda.Stream()
    dev = torch.cuda.current_device()
    n = args.number
    rows = {}
    rows["C++ current_stream(), outside any stream block"] = cpp_median(
        lambda: module.time_current_stream(n), args.repeat
    )
    with torch.cuda.stream(s):
        assert module.current_address(-1) == s.cuda_stream
        rows["C++ current_stream(), inside torch.cuda.stream(s)"] = cpp_median(
            lambda: module.time_current_stream(n), args.repeat
        )
    rows["C++ scoped_current_stream enter + leave"] = cpp_median(
        lambda: module.time_scope(s, dev, n // 10), args.repeat
    )

    env = {"torch": torch, "sl": streamlike, "s": s, "v": streamlike.StreamView(s)}
    py = interleaved(
        {
            "torch.cuda.current_stream().cuda_stream": "torch.cuda.current_stream().cuda_stream",
            "torch.cuda.current_stream()": "torch.cuda.current_stream()",
            "torch.cuda.current_stream() again": "torch.cuda.current_stream()",
            "streamlike.current_stream()": "sl.current_stream()",
            "with streamlike.use(s): pass": "with sl.use(s): pass",
            "with streamlike.use(v): pass (v: a StreamView of s)": "with sl.use(v): pass",
            "with torch.cuda.stream(s): pass": "with torch.cuda.stream(s): pass",
            "with torch.cuda.stream(s): pass again": "with torch.cuda.stream(s): pass",
        },
        env,
        n,
        args.repeat,
    )
    rows.update(py)
    providers = streamlike.current_stream_providers()
    try:
        import cupy  # noqa: F401

        streamlike.current_stream_providers()  # registers CuPy's provider
        rows["with streamlike.use(s): pass, CuPy imported"] = interleaved(
            {"use": "with sl.use(s): pass"}, env, n // 10, args.repeat
        )["use"]
    except ImportError:
        pass

    print(f"providers: {', '.join(providers)} (torch {torch.__version__}, Python {platform.python_version()})")
    for name, ns in rows.items():
        print(f"  {name:<58} {ns:9.1f} ns")

    verdicts = []
    control = py["torch.cuda.current_stream() again"] / py["torch.cuda.current_stream()"]
    noisy = abs(control - 1) > CONTROL_TOLERANCE

    def judge(name, value, want, ok, python_row):
        verdict = "ok" if ok else "MISSED"
        if python_row and noisy and verdict == "MISSED":
            verdict = "INCONCLUSIVE"
        verdicts.append({"name": name, "value": value, "want": want, "verdict": verdict})
        print(f"  {name:<62} {value:9.2f}  (want {want})  {verdict}")

    print("targets:")
    for where in ("outside any stream block", "inside torch.cuda.stream(s)"):
        ns = rows[f"C++ current_stream(), {where}"]
        judge(f"C++ current_stream() ns, {where}", ns, f"<= {CPP_MAX_NS:g}", ns <= CPP_MAX_NS, False)
        ratio = py["torch.cuda.current_stream().cuda_stream"] / ns
        judge(
            f"torch...cuda_stream / C++ current_stream(), {where}",
            ratio,
            f">= {CPP_MIN_SPEEDUP:g}",
            ratio >= CPP_MIN_SPEEDUP,
            True,
        )
    ratio = py["torch.cuda.current_stream()"] / py["streamlike.current_stream()"]
    judge(
        "torch.cuda.current_stream() / streamlike.current_stream()",
        ratio,
        f">= {PY_MIN_SPEEDUP:g}",
        ratio >= PY_MIN_SPEEDUP,
        True,
    )
    use_ns = py["with streamlike.use(s): pass"]
    three = {"streamlike", "torch", "tvm-ffi"} <= set(providers)
    judge(
        f"use(s) enter + leave ns ({len(providers)} providers)",
        use_ns,
        f"<= {USE_MAX_NS:g}, with tvm-ffi",
        use_ns <= USE_MAX_NS and three,
        True,
    )
    block_control = py["with torch.cuda.stream(s): pass again"] / py["with torch.cuda.stream(s): pass"]
    ratio = use_ns / py["with torch.cuda.stream(s): pass"]
    verdict_before = len(verdicts)
    judge(
        "use(s) enter + leave / with torch.cuda.stream(s)",
        ratio,
        f"<= {USE_VS_TORCH_MAX:g}",
        ratio <= USE_VS_TORCH_MAX,
        True,
    )
    if abs(block_control - 1) > CONTROL_TOLERANCE and verdicts[verdict_before]["verdict"] == "MISSED":
        verdicts[verdict_before]["verdict"] = "INCONCLUSIVE"  # its own baseline moved by more than the tolerance
    mixes = run_mixes(args)
    for mix, result in mixes.items():
        if "missing" in result:
            missing.append(result["missing"])
            continue
        r = result["rows"]
        mix_noisy = abs(r["torch block again"] / r["torch block"] - 1) > CONTROL_TOLERANCE
        if "cupy block" in r:
            rows[f"mix {mix}: with cupy_stream: pass (CuPy's own block)"] = r["cupy block"]
            print(f"  mix {mix}: with cupy_stream: pass (CuPy's own block, shown)    {r['cupy block']:9.1f} ns")
        for row in ("use(v)", "use(s)"):
            if row not in r:
                continue
            what = f"mix {mix} ({', '.join(result['providers'])}): {row}"
            rows[f"{what} enter + leave"] = r[row]
            rows[f"mix {mix}: with torch.cuda.stream(s): pass"] = r["torch block"]
            judge(f"{what} ns", r[row], f"<= {USE_MAX_NS:g}", r[row] <= USE_MAX_NS, True)
            ratio = r[row] / r["torch block"]
            before = len(verdicts)
            judge(f"{what} / with torch.cuda.stream(s)", ratio, "< 1", ratio < 1.0, True)
            if mix_noisy and verdicts[before]["verdict"] == "MISSED":
                verdicts[before]["verdict"] = "INCONCLUSIVE"
    print(
        f"  control: torch.cuda.current_stream() again / first = {control:.3f} (|control - 1| <= {CONTROL_TOLERANCE})"
    )
    print(
        f"  control: with torch.cuda.stream(s) again / first = {block_control:.3f}"
        f" (|control - 1| <= {CONTROL_TOLERANCE})"
    )
    for m in missing:
        print(f"  not measured: {m}")

    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "rows": rows,
                    "targets": verdicts,
                    "providers": providers,
                    "control": control,
                    "torch_block_control": block_control,
                    "missing": missing,
                    "torch": torch.__version__,
                    "python": platform.python_version(),
                },
                f,
                indent=2,
            )
    if not args.check:
        return 0
    if missing or any(v["verdict"] == "MISSED" for v in verdicts):
        return 1
    return 3 if any(v["verdict"] == "INCONCLUSIVE" for v in verdicts) else 0


if __name__ == "__main__":
    sys.exit(main())
