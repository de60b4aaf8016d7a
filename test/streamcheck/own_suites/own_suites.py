"""Runs correct programs under streamcheck and asserts it reports nothing: the torch training step
and the CuPy pipeline (workloads.py), the package's GPU test files (test/package/gpu_*.py, under
`python -m streamlike.check --fail --json`) and the gpu suite's C++ programs (test/gpu, with the
checker injected through CUDA_INJECTION64_PATH and the same options from the environment). A
report is a false positive of the checker or a bug of the program, and fails the run, printed
whole. The tests that break a capture or launch on another stream on purpose (to show a refusal or
a check) are left out below, each with its reason; docs/streamcheck.md lists them. Exits 77
without a device.

usage: own_suites.py workloads CHECK_PY LIBRARY WORKLOADS_PY
       own_suites.py package CHECK_PY LIBRARY RUN_PYTEST PACKAGE_TEST_DIR
       own_suites.py programs CHECK_PY LIBRARY PROGRAM...
environment:
  STREAMLIKE_PACKAGE_SITE    the folder the streamlike package is installed in (pip install --target,
                             as for test/package and the corpus); without it the package's tests
                             install it themselves (conftest.py), and the workloads skip
  STREAMLIKE_PACKAGE_PYTHON  with it, the interpreter whose environment that is (default: this one)
  STREAMLIKE_REQUIRE_GPU=1   a run that skips as a whole (no device, torch, CuPy or package) fails"""

import ctypes
import glob
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77
part = sys.argv[1] if len(sys.argv) > 1 else ""
require_gpu = os.environ.get("STREAMLIKE_REQUIRE_GPU") == "1"
package_site = os.environ.get("STREAMLIKE_PACKAGE_SITE")
python = (package_site and os.environ.get("STREAMLIKE_PACKAGE_PYTHON")) or sys.executable

# The package's GPU test files, as test/package/meson.build groups them into runs.
PACKAGE_RUNS = [
    ["gpu_package.py", "gpu_capture_package.py", "gpu_threads_package.py"],
    ["gpu_event_capture.py"],
    ["gpu_prohibited_calls.py"],
    ["gpu_current_stream_matrix.py"],
    ["gpu_current_stream.py"],
]
# Tests that make the bug on purpose: test name -> why (pytest -k deselects them by name).
PACKAGE_LEFT_OUT = {
    "test_an_invalidated_capture_is_reported_and_refused_calls_stay_refused": "invalidates a capture with "
    "cudaStreamQuery of the capturing stream, to show the package's refusals after an invalidation",
    "test_a_cupy_op_under_torch_stream_alone_runs_elsewhere": "the sglang shape as a control: a CuPy op "
    "inside torch.cuda.stream(s) runs on CuPy's stream, and the test asserts that it does",
    "test_the_check_flags_a_stream_other_than_the_current_one": "memsets on a stream other than the "
    "current one inside use(s), to show streamlike's own opt-in check reporting it",
}
# The gpu suite's programs: test cases that make the bug on purpose, by program, as doctest
# filters (a comma separates filters, so a name with one is given up to it, with *).
PROGRAM_LEFT_OUT = {
    "gpu_capture_safety": {
        "an invalidated capture: every refusing function*": "invalidates captures with cudaStreamQuery of "
        "the capturing stream, to show every function refusing an invalidated capture",
    },
    "gpu_capture_scope": {
        "end() of an invalidated capture throws and ends it; end() twice throws": "invalidates the capture "
        "with cudaStreamQuery, to show end() throwing",
    },
}

failures = []
skipped = []
passed = []


CHECKER_VARIABLES = ("CUDA_INJECTION64_PATH", "STREAMLIKE_CHECK", "STREAMLIKE_CHECK_JSON", "STREAMLIKE_CHECK_FAIL")


def run_env(inject, json_pattern):
    """The environment of a run. Python runs get none of the checker's variables: `python -m
    streamlike.check` must set them itself. Other programs get what it would set (nothing is
    allowed: every report counts)."""
    env = {k: v for k, v in os.environ.items() if k not in CHECKER_VARIABLES and not k.startswith("STREAMLIKE_CHECK_")}
    if inject:
        env.update(
            CUDA_INJECTION64_PATH=library,
            STREAMLIKE_CHECK="all",
            STREAMLIKE_CHECK_JSON=json_pattern,
            STREAMLIKE_CHECK_FAIL="1",
        )
    if package_site:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_site, os.environ.get("PYTHONPATH")) if p)
    return env


def run_checked(name, command_for, tmp, inject=False, cwd=None, timeout=900, skip_is_failure=require_gpu):
    """Runs the command `command_for(json_pattern)` gives (with the checker injected where `inject`)
    and judges it: every process's JSON summary read (the library's, %p: one per process; the
    command's, every process merged), no report in any, exit status 0. A skip (77) is a failure
    where skip_is_failure."""
    folder = tempfile.mkdtemp(dir=tmp)
    json_pattern = os.path.join(folder, "reports-%p.json")
    r = subprocess.run(
        command_for(json_pattern),
        env=run_env(inject, json_pattern),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    summaries, reports = [], []
    for path in sorted(glob.glob(os.path.join(folder, "reports-*.json"))):
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
        # python -m streamlike.check writes one file, every checked process merged
        # (streamlike.check/1: its --fail has judged the rest); the library one per process.
        summaries += summary["processes"] if summary.get("schema") == "streamlike.check/1" else [summary]
        reports += summary["reports"]
    said = f"--- stdout (end):\n{r.stdout.strip()[-6000:]}\n--- stderr (end):\n{r.stderr.strip()[-6000:]}"
    if reports:
        failures.append(f"{name}: {len(reports)} report(s), expected none:\n{json.dumps(reports, indent=1)}\n{said}")
    elif r.returncode == SKIP:
        why = ((r.stdout.strip() or r.stderr.strip()).splitlines() or ["it printed nothing"])[-1]
        if skip_is_failure:
            failures.append(f"{name}: skipped ({why}), and STREAMLIKE_REQUIRE_GPU=1 asks for every run")
        else:
            skipped.append(f"{name}: {why}")
    elif r.returncode != 0:
        failures.append(f"{name}: exit {r.returncode}\n{said}")
    elif not summaries:  # the checker never loaded: the run proved nothing
        failures.append(f"{name}: passed, but no process wrote the checker's JSON summary\n{said}")
    else:
        passed.append(name)
        print(f"ok: {name}: no report ({len(summaries)} checked process(es))")


def device_problem():
    """Why no CUDA device can be used, or None (asked of the driver, as test/package/gpu_presence.py
    does; this process is not checked)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return f"no CUDA driver ({e})"
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return "no CUDA device"
    return None


if part not in ("workloads", "package", "programs") or len(sys.argv) < 5:
    sys.exit(__doc__)
check_py, library = os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
problem = device_problem()
if problem is not None:
    if require_gpu:
        print(f"own_suites.py: {problem}, and STREAMLIKE_REQUIRE_GPU=1 asks for a device")
        sys.exit(1)
    print(f"own_suites.py: {problem}; skipped")
    sys.exit(SKIP)
if package_site and not os.path.isdir(os.path.join(package_site, "streamlike")):
    print(f"own_suites.py: STREAMLIKE_PACKAGE_SITE={package_site} holds no streamlike/ folder")
    sys.exit(1)


def checker(json_pattern):
    """python -m streamlike.check (its source file, standard library only) with --fail and --json: one
    file, every process's reports merged."""
    return [python, check_py, "--fail", "--json", json_pattern.replace("%p", "merged"), "--library", library]


with tempfile.TemporaryDirectory() as tmp:
    if part == "workloads":
        workloads_py = os.path.abspath(sys.argv[4])
        for workload in ("torch-training-step", "cupy-pipeline"):
            run_checked(workload, lambda j, w=workload: checker(j) + [workloads_py, w], tmp)
    elif part == "package":
        run_pytest, package_dir = os.path.abspath(sys.argv[4]), os.path.abspath(sys.argv[5])
        deselect = " and ".join(f"not {name}" for name in PACKAGE_LEFT_OUT)
        for name, why in PACKAGE_LEFT_OUT.items():
            print(f"left out: {name}: {why}")
        for files in PACKAGE_RUNS:
            paths = [os.path.join(package_dir, f) for f in files]
            run_checked(
                " ".join(files),
                lambda j, paths=paths: checker(j) + [run_pytest, "--skip-if-nothing-ran", *paths, "--", "-k", deselect],
                tmp,
                cwd=package_dir,
            )
    else:
        for program, cases in PROGRAM_LEFT_OUT.items():
            for case, why in cases.items():
                print(f"left out: {program}: {case}: {why}")
        for program in (os.path.abspath(p) for p in sys.argv[4:]):
            name = os.path.basename(program)
            left_out = PROGRAM_LEFT_OUT.get(name, {})
            command = [program] + ([f"--test-case-exclude={','.join(left_out)}"] if left_out else [])
            # A program decides its own skips (STREAMLIKE_REQUIRE_GPU=1 fails one without a device;
            # gpu_multi_gpu skips below two devices).
            run_checked(name, lambda j, command=command: command, tmp, inject=True, timeout=300, skip_is_failure=False)

for s in skipped:
    print("skipped:", s)
if failures:
    print("FAILED:\n" + "\n\n".join(failures))
    sys.exit(1)
if not passed:
    print(f"own_suites.py {part}: every run skipped")
    sys.exit(SKIP)
print(f"own_suites.py {part}: {len(passed)} checked run(s), no report")
