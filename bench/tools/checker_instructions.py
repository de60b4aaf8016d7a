#!/usr/bin/env python3
"""Instructions streamcheck's own callbacks execute per clean checked launch, without a GPU.

bench/streamcheck_callbacks.cpp loads libstreamlike_check.so with the fake libcupti of
test/streamcheck/fake_cupti.cpp and the fake CUDA of test/fake_cuda, and makes the callbacks
(entry and exit) of LAUNCHES cuLaunchKernel calls on one stream; it runs under callgrind collecting
inside the checker's callback (on_driver_call) only. Two runs, of LAUNCHES and 2 x LAUNCHES, and
their difference divided by LAUNCHES: what one more launch costs, without the checker's start or
its first calls. Rows:
  on_current       this program's streamlike holds a scope on the launches' stream (the shape of
                   bench/streamcheck_launches.cu on the GPU: the checker's copy of streamlike
                   forwards to that registry)
  nothing_current  no scope: every framework's "nothing set"
For each row: the instructions per launch, then the functions that cost most, inclusive and self.
What CUPTI itself costs is not here (the fake's dispatch is not the driver's): that is the floor
bench/tools/streamcheck_overhead.py measures on the GPU.

    bench/tools/checker_instructions.py BUILD [--launches N] [--top K] [--no-build] [--without-valgrind]

Builds what it needs in BUILD (configured with -Dtests=enabled, the benchmarks on) unless
--no-build. --without-valgrind runs each row once, briefly, as a smoke test. Needs valgrind
(callgrind_annotate) otherwise.
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

TARGETS = ["streamlike_check", "streamcheck_fake_cupti", "streamlike_fake_cuda", "streamcheck_callbacks"]
ROWS = ["on_current", "nothing_current"]
CALLBACK = "*on_driver_call*"


def die(message):
    sys.exit(f"checker_instructions.py: {message}")


def paths(build):
    found = {
        "checker": os.path.join(build, "src", "streamcheck", "libstreamlike_check.so"),
        "cupti": os.path.join(build, "test", "streamcheck", "libstreamcheck_fake_cupti.so"),
        "cuda": os.path.join(build, "test", "fake_cuda", "libstreamlike_fake_cuda.so"),
        "program": os.path.join(build, "bench", "streamcheck_callbacks"),
    }
    for path in found.values():
        if not os.path.exists(path):
            die(f"{path} is not built (BUILD needs -Dtests=enabled and the benchmarks; meson compile -C {build})")
    return {k: os.path.abspath(v) for k, v in found.items()}


def environment(p, folder):
    """The fake CUDA preloaded (libstreamlike's runtime calls) and named libcuda.so.1 (the checker
    opens the driver by that name); no checker options from the caller's environment."""
    driver = os.path.join(folder, "driver")
    os.makedirs(driver, exist_ok=True)
    link = os.path.join(driver, "libcuda.so.1")
    if not os.path.lexists(link):
        os.symlink(p["cuda"], link)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIKE_CHECK") and k != "CUDA_INJECTION64_PATH"}
    env["LD_PRELOAD"] = p["cuda"]
    env["LD_LIBRARY_PATH"] = driver + (os.pathsep + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def command(p, row, launches):
    return [p["program"], p["checker"], p["cupti"], row, str(launches)]


def parse_callgrind(path):
    """(total, {function: (inclusive, self)}) from a callgrind output file (event Ir only). A
    function is its name and its object, so the two copies of streamlike in the process (the
    program's libstreamlike.so, the checker's own) stay apart; its inclusive cost is its own plus
    what the calls it makes cost (nothing here recurses)."""
    names = {"ob": {}, "fn": {}}
    own, called = collections.Counter(), collections.Counter()

    def name_of(table, spec):
        m = re.match(r"^\((\d+)\)(?: (.*))?$", spec)
        if not m:
            return spec
        if m.group(2) is not None:
            names[table][m.group(1)] = m.group(2)
        return names[table][m.group(1)]

    obj, fn, call, total = None, None, False, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("ob="):
                obj = name_of("ob", line[3:])
            elif line.startswith("cob="):
                name_of("ob", line[4:])  # defines a name later lines may use
            elif line.startswith("fn="):
                fn = (name_of("fn", line[3:]), obj)
            elif line.startswith("cfn="):
                name_of("fn", line[4:])
            elif line.startswith("calls="):
                call = True
            elif line.startswith(("totals:", "summary:")):
                total = int(line.split()[1])
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                fields = line.split()
                cost = int(fields[1]) if len(fields) > 1 else 0
                if call:
                    called[fn] += cost
                    call = False
                else:
                    own[fn] += cost
    if total is None:
        die(f"{path} has no totals")
    return total, {f: (own[f] + called[f], own[f]) for f in set(own) | set(called)}


def profile(p, env, folder, row, launches):
    out = os.path.join(folder, f"callgrind.{row}.{launches}")
    r = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            "--collect-atstart=no",
            f"--toggle-collect={CALLBACK}",
        ]
        + command(p, row, launches),
        env=env,
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        die(f"{row} under callgrind failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return parse_callgrind(out)


def bare(name):
    """A function's name without its parameters and anonymous namespaces."""
    name = name.replace("(anonymous namespace)::", "")
    return name[: name.index("(")] if "(" in name and not name.startswith("(") else name


def shown(function, objects, width=100):
    """The function's bare name, and its object where two objects have one of that name."""
    name, obj = bare(function[0]), function[1]
    if objects[name] > 1 and obj:
        name += f" [{os.path.basename(obj)}]"
    return name if len(name) <= width else name[: width - 3] + "..."


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("build")
    a.add_argument("--launches", type=int, default=5000, help="launches of the shorter run (default 5000)")
    a.add_argument("--top", type=int, default=14, help="functions shown per row (default 14)")
    a.add_argument("--no-build", action="store_true", help="build nothing (the targets must exist)")
    a.add_argument("--without-valgrind", action="store_true", help="run each row once, uncounted (smoke test)")
    args = a.parse_args()
    if args.launches <= 0:
        die(f"--launches must be a positive count, got {args.launches}")
    if not args.no_build:
        r = subprocess.run(["meson", "compile", "-C", args.build] + TARGETS, capture_output=True, text=True)
        if r.returncode != 0:
            die(f"meson compile -C {args.build} {' '.join(TARGETS)} failed:\n{r.stdout}{r.stderr}")
    p = paths(args.build)
    with tempfile.TemporaryDirectory() as folder:
        env = environment(p, folder)
        if args.without_valgrind:
            for row in ROWS:
                r = subprocess.run(command(p, row, 100), env=env, capture_output=True, text=True)
                if r.returncode != 0:
                    die(f"{row} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
                print(r.stdout.strip())
            return 0
        for tool in ("valgrind", "callgrind_annotate"):
            if shutil.which(tool) is None:
                die(f"{tool} not found (apt-get install valgrind)")
        for row in ROWS:
            short_total, short_costs = profile(p, env, folder, row, args.launches)
            long_total, long_costs = profile(p, env, folder, row, 2 * args.launches)
            per_launch = (long_total - short_total) / args.launches
            print(f"{row}: {per_launch:.0f} instructions per clean checked launch in the checker's callbacks")
            print(f"  {'inclusive':>9} {'self':>6}  function (per launch, entry and exit callbacks together)")
            zero = (0, 0)
            more = {
                f: tuple((a - b) / args.launches for a, b in zip(long_costs[f], short_costs.get(f, zero), strict=True))
                for f in long_costs
            }
            objects = collections.Counter(bare(name) for name, _ in more)
            # The callback's callers (the program, the fake's dispatch) carry its whole cost and none of
            # their own: not the checker's functions.
            mine = [(inc, own, f) for f, (inc, own) in more.items() if own >= 0.5 or 0.5 <= inc < per_launch - 0.5]
            rows = sorted(mine, key=lambda r: (-r[0], -r[1]))
            for inclusive, own, function in rows[: args.top]:
                print(f"  {inclusive:9.0f} {own:6.0f}  {shown(function, objects)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
