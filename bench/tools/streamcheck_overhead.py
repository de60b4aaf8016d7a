#!/usr/bin/env python3
"""streamcheck's overhead, side by side in one run: the launch loop (bench/streamcheck_launches.cu,
10,000 small launches on the current stream) and, with --torch, a torch training step of a small
model, each timed in four configurations, in rotated order per round:
  none      no checker
  control   no checker again: the run's noise (its ratio to none must stay within 2%)
  off       libstreamlike_check.so injected (CUDA_INJECTION64_PATH), STREAMLIKE_CHECK unset
  on        injected with STREAMLIKE_CHECK=all
Prints the median times, the ratios to none (each the median over rounds of that round's ratio;
targets: launches on <= 1.10, torch step on <= 1.03, off ~ 1.00) and the checker's cost per
checked launch in ns. Exits 77 without a device, 1 when a
target is missed, 2 when the control says the run cannot tell.

usage: streamcheck_overhead.py BUILD [--rounds N] [--torch]"""

import argparse
import json
import os
import statistics
import subprocess
import sys

SKIP = 77
LAUNCHES = 10000
TORCH_STEP = r"""
import json, sys, time, torch
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 512)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 512, device="cuda")
def step():
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(int(sys.argv[1])):
        start = time.perf_counter()
        for _ in range(50):
            step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) / 50)
print(json.dumps(sorted(times)[len(times) // 2]))
"""


def environments(library):
    base = {
        k: v for k, v in os.environ.items() if not k.startswith("STREAMLIKE_CHECK") and k != "CUDA_INJECTION64_PATH"
    }
    return {
        "none": base,
        "control": base,
        "off": dict(base, CUDA_INJECTION64_PATH=library),
        "on": dict(base, CUDA_INJECTION64_PATH=library, STREAMLIKE_CHECK="all"),
    }


def launch_loop(program, env):
    r = subprocess.run(
        [program, "--benchmark_format=json", "--benchmark_repetitions=3", "--benchmark_min_time=0.5"],
        env=env,
        capture_output=True,
        text=True,
    )
    if r.returncode == SKIP:
        print(r.stderr.strip())
        sys.exit(SKIP)
    if r.returncode != 0:
        sys.exit(f"streamcheck_launches failed:\n{r.stderr}")
    rows = [b for b in json.loads(r.stdout)["benchmarks"] if b.get("run_type") == "iteration"]
    return statistics.median(b["real_time"] for b in rows) * 1e-3  # ms -> s


def torch_step(env):
    r = subprocess.run([sys.executable, "-c", TORCH_STEP, "15"], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"the torch step failed:\n{r.stderr}")
    return float(r.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--torch", action="store_true", help="also the torch training step")
    a = p.parse_args()
    program = os.path.join(a.build, "bench", "streamcheck_launches")
    library = os.path.abspath(os.path.join(a.build, "src", "streamcheck", "libstreamlike_check.so"))
    for path in (program, library):
        if not os.path.exists(path):
            sys.exit(f"streamcheck_overhead.py: {path} not built (meson compile -C {a.build})")
    envs = environments(library)
    workloads = {"launches": lambda env: launch_loop(program, env)}
    if a.torch:
        workloads["torch step"] = torch_step
    names = list(envs)
    times = {w: {n: [] for n in names} for w in workloads}
    for round_ in range(a.rounds):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for w, run in workloads.items():
            for n in order:
                times[w][n].append(run(envs[n]))
    status = 0
    targets = {"launches": 1.10, "torch step": 1.03}
    for w in workloads:
        median = {n: statistics.median(times[w][n]) for n in names}
        # Paired: each round's ratio to that round's none, then the median over rounds, which
        # cancels a drift of the machine that moves every configuration of a round together.
        base = times[w]["none"]
        ratio = {n: statistics.median(t / b for t, b in zip(times[w][n], base, strict=True)) for n in names}
        print(f"{w}: " + ", ".join(f"{n} {median[n] * 1e3:.3f} ms (x{ratio[n]:.3f})" for n in names))
        if abs(ratio["control"] - 1) > 0.02:
            print(f"  INCONCLUSIVE: the control is x{ratio['control']:.3f}, beyond 2%")
            status = max(status, 2)
            continue
        verdict = "PASS" if ratio["on"] <= targets[w] else "FAIL"
        print(f"  {verdict}: on x{ratio['on']:.3f} (target <= {targets[w]:.2f}), off x{ratio['off']:.3f}")
        if verdict == "FAIL":
            status = 1
        if w == "launches":
            per_launch = (median["on"] - median["none"]) / LAUNCHES * 1e9
            print(f"  cost per checked launch: {per_launch:.0f} ns")
    return status


if __name__ == "__main__":
    sys.exit(main())
