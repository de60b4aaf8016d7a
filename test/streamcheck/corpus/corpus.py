"""Runs streamcheck's bug corpus under the checker and asserts its reports: each bug reported with
the right kind, API and call site (the native function, or the Python file:line), each fixed twin
reported nothing, and each correct program (work on other streams that it orders with the current
one) reported nothing and printed the result it was to compute. Exits 77 without a device.

usage: corpus.py PROGRAMS CHECK_PY LIBRARY GPU_FRAMEWORKS_PY
environment:
  STREAMLIKE_PACKAGE_SITE    the folder the streamlike package is installed in (pip install --target,
                             as for test/package): the Python shapes import it from there
  STREAMLIKE_PACKAGE_PYTHON  with it, the interpreter whose environment that is (default: this one)
  STREAMLIKE_REQUIRE_GPU=1   a shape that skips (no device, torch, CuPy or package) is a failure
  STREAMLIKE_CORPUS_NATIVE_CUPTI  the libcupti every C++ program's checker must have used (its start
                             line names it): the C++ programs load none of their own, so the
                             checker's search finds it (scripts/wheel-gpu-check --streamcheck gives
                             the nvidia-cuda-cupti wheel's)
Each checked run's CUPTI, from the checker's start line, is listed at the end."""

import json
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77
programs, check_py, library, frameworks_py = (os.path.abspath(a) for a in sys.argv[1:5])
require_gpu = os.environ.get("STREAMLIKE_REQUIRE_GPU") == "1"
package_site = os.environ.get("STREAMLIKE_PACKAGE_SITE")
python = (package_site and os.environ.get("STREAMLIKE_PACKAGE_PYTHON")) or sys.executable
native_cupti = os.environ.get("STREAMLIKE_CORPUS_NATIVE_CUPTI")
# The checker's start line: "streamcheck: checking ... on N CUDA driver calls (LIBCUPTI, HOW)".
START_LINE = re.compile(r"^streamcheck: checking .* CUDA driver calls \((.*), ([^,()]*)\)$", re.MULTILINE)

# C++: shape -> (kind, API prefix, the function the native frames must name, words of the why)
NATIVE = {
    "launch-on-stream-zero": ("wrong-stream", "cuLaunchKernel", "library_launch_on_stream_zero", ""),
    "copy-on-stream-zero": ("wrong-stream", "cuMemcpy", "library_copy_on_stream_zero", ""),
    "malloc-in-capture": (
        "capture-breaker",
        "cuMemAlloc",
        "library_allocates_with_cuda_malloc",
        "begun by this thread",
    ),
    "sync-in-capture": ("capture-breaker", "cuStreamSynchronize", "library_synchronizes", "begun by this thread"),
    "capture-begun-while-paused": (
        "capture-breaker",
        "cuStreamSynchronize",
        "library_synchronizes",
        "begun by this thread",
    ),
    "malloc-beside-global-capture": (
        "capture-breaker",
        "cuMemAlloc",
        "library_allocates_with_cuda_malloc",
        "global mode begun by thread ",
    ),
    "free-async-on-stream-zero": ("wrong-stream", "cuMemFreeAsync", "library_frees_on_stream_zero", ""),
    "sync-of-another-threads-capture": (
        "capture-breaker",
        "cuStreamSynchronize",
        "library_synchronizes",
        "begun by thread ",
    ),
}
# Python: shape -> (kind, API prefix, the function whose `# the bug` line the report must name).
# (Correct programs: CORRECT_PYTHON below; a torch training step and a CuPy pipeline: own_suites/.)
PYTHON = {
    "torch-extension-on-stream-zero": ("wrong-stream", "cuLaunchKernel", "torch_extension_on_stream_zero"),
    "cupy-op-inside-torch-stream": ("wrong-stream", "cuLaunchKernel", "cupy_op_inside_torch_stream"),
    "tvm-ffi-env-stream-not-following-torch": (
        "wrong-stream",
        "cuLaunchKernel",
        "tvm_ffi_env_stream_not_following_torch",
    ),
    "torch-sync-inside-graph": ("capture-breaker", "cuCtxSynchronize", "torch_sync_inside_graph"),
    "cuda-malloc-inside-graph": ("capture-breaker", "cuMemAlloc", "cuda_malloc_inside_graph"),
    "foreign-event-sync-inside-cupy-capture": (
        "capture-breaker",
        "cuEventSynchronize",
        "foreign_event_sync_inside_cupy_capture",
    ),
    "library-side-stream-not-waiting": ("wrong-stream", "cuLaunchKernel", "library_on_its_own_stream"),
    "cupy-kernel-on-side-stream-unordered": ("wrong-stream", "cuLaunchKernel", "double_on_side_stream"),
}
# Correct Python programs (`gpu_frameworks.py SHAPE correct`): shape -> the result it must print, read
# back from the GPU, so that a run that did nothing cannot pass for a silent one. N = 1024 elements.
CORRECT_PYTHON = {
    "library-on-a-side-stream-it-is-handed": "6144.0",  # N threes, doubled by the library on s2
    "cupy-kernel-on-side-stream-ordered-by-events": "4096.0 4096.0",  # N ones + 1, doubled on c2; twice
    "nccl-async-collective-in-side-stream": "3072.0",  # N twos, all-reduced over one rank, + 1
    "cudnn-first-convolution-in-side-stream": "56448.0",  # ones: 8 x 14 x 14 outputs of 4 x 3 x 3
    "jax-beside-torch-through-dlpack": "1049600.0",  # arange(N) * 2 + 1 in JAX, + 1 in torch: N (N + 1)
    "torch-default-stream-block-inside-use": "2048.0",  # N ones, doubled
    "cupy-alone-on-its-stream": "2095104.0",  # arange(N), doubled twice: 2 N (N - 1)
    "streamlike-use-alone-with-a-driver-launch": "4096.0",  # N words set to 3, each + 1
}

failures = []
skipped = []
cupti_used = {}  # "LIBCUPTI (HOW)" -> the runs whose checker started with it


def used_cupti(r):
    """The libcupti the run's checker started with, as its start line names it; None if it did not."""
    m = START_LINE.search(r.stderr)
    return m.group(1) if m else None


def same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:  # a bare name the loader found, or a file gone
        return False


def bug_lines():
    """function name -> the line number of its `# the bug` comment in gpu_frameworks.py."""
    lines, current = {}, None
    with open(frameworks_py, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            m = re.match(r"def (\w+)\(", text)
            if m:
                current = m.group(1)
            if text.rstrip().endswith("# the bug"):
                lines[current] = number
    return lines


def python_path():
    """PYTHONPATH for the Python shapes: the installed package first, as test/package finds it."""
    paths = [package_site] if package_site else []
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    return os.pathsep.join(paths)


def run_checked(command, json_path):
    env = dict(os.environ, CUDA_INJECTION64_PATH=library, STREAMLIKE_CHECK="all", STREAMLIKE_CHECK_JSON=json_path)
    env.pop("STREAMLIKE_CHECK_FAIL", None)
    if python_path():
        env["PYTHONPATH"] = python_path()
    r = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    reports = None
    if os.path.exists(json_path):
        with open(json_path, encoding="utf-8") as f:
            reports = json.load(f)["reports"]
        os.remove(json_path)
    return r, reports


def output(r):
    """The run's own words, for a failure: what the program and the checker said."""
    return f"--- stdout:\n{r.stdout.strip()}\n--- stderr:\n{r.stderr.strip()}"


def judge(name, variant, r, reports, expected, site_matches, result=None):
    """Adds a failure, a skip or an ok for one run: a report matching `expected` at its call site, or
    none where `expected` is None, and then, where `result` is given, that result printed."""
    where = f"{name} {variant}"
    for m in START_LINE.finditer(r.stderr):
        cupti_used.setdefault(f"{m.group(1)} ({m.group(2)})", []).append(where)
    if r.returncode == SKIP:
        why = r.stdout.strip() or r.stderr.strip()
        if require_gpu:
            failures.append(f"{where}: skipped ({why}), and STREAMLIKE_REQUIRE_GPU=1 asks for every shape to run")
        else:
            skipped.append(f"{where}: {why}")
        return
    if r.returncode != 0 or reports is None:
        json_state = "missing" if reports is None else "written"
        failures.append(f"{where}: exit {r.returncode}, JSON {json_state}\n{output(r)}")
        return
    if expected is None:
        if reports:
            failures.append(f"{where}: expected no report, got {json.dumps(reports, indent=1)}\n{output(r)}")
        elif result is not None:
            printed = re.search(rf"^gpu_frameworks\.py: {re.escape(name)}: result (.*)$", r.stdout, re.MULTILINE)
            if printed is None or printed.group(1) != result:
                failures.append(f"{where}: no report, but expected the result {result}\n{output(r)}")
            else:
                print(f"ok: {where}: no report, result {result}")
        return
    kind, api = expected[0], expected[1]
    found = [x for x in reports if x["kind"] == kind and x["api"].startswith(api) and site_matches(x)]
    if not found:
        failures.append(
            f"{where}: no {kind} report of {api}* at the bug's call site among {json.dumps(reports, indent=1)}\n"
            + output(r)
        )
    else:
        print(f"ok: {where}: {kind} {found[0]['api']} at {found[0]['python'] or found[0]['frames'][:1]}")


probe = subprocess.run([programs, "launch-on-stream-zero", "fixed"], capture_output=True, text=True)
if probe.returncode == SKIP:
    print(f"corpus.py: {probe.stderr.strip()}; skipped")
    sys.exit(SKIP)
if package_site and not os.path.isdir(os.path.join(package_site, "streamlike")):
    print(f"corpus.py: STREAMLIKE_PACKAGE_SITE={package_site} holds no streamlike/ folder")
    sys.exit(1)

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "reports.json")
    for shape, (kind, api, function, why) in NATIVE.items():
        for variant in ("bug", "fixed"):
            r, reports = run_checked([programs, shape, variant], out)
            used = used_cupti(r)
            if native_cupti and r.returncode != SKIP and not (used and same_file(used, native_cupti)):
                failures.append(f"{shape} {variant}: the checker used CUPTI {used}, not {native_cupti}\n{output(r)}")
            judge(
                shape,
                variant,
                r,
                reports,
                (kind, api) if variant == "bug" else None,
                lambda x, function=function, why=why: any(function in f for f in x["frames"]) and why in x["why"],
            )
    lines = bug_lines()
    # As users run it: `python -m streamlike.check`, which imports the package (and with it CuPy's
    # current-stream provider), where the package is installed; else the command's file alone.
    command_line = [python, "-m", "streamlike.check"] if package_site else [python, check_py]
    for shape, expected in PYTHON.items():
        for variant in ("bug", "fixed"):
            command = command_line + ["--library", library, frameworks_py, shape, variant]
            r, reports = run_checked(command, out)
            location = f"{frameworks_py}:{lines.get(expected[2])}"
            judge(
                shape,
                variant,
                r,
                reports,
                expected if variant == "bug" else None,
                lambda x, location=location: x["python"] == location,
            )
    for shape, result in CORRECT_PYTHON.items():
        r, reports = run_checked(command_line + ["--library", library, frameworks_py, shape, "correct"], out)
        judge(shape, "correct", r, reports, None, None, result)

for s in skipped:
    print("skipped:", s)
for cupti, runs in cupti_used.items():
    print(f"CUPTI: {cupti} in {len(runs)} run(s): {', '.join(runs)}")
if failures:
    print("FAILED:\n" + "\n\n".join(failures))
    sys.exit(1)
print("corpus: every bug reported at its call site, every fixed twin and correct program clean")
