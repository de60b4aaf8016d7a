"""pytest --streamcheck, through the pytest11 entry point that pyproject.toml declares: the session runs
again under python -m streamlike.check, a report fails the test that made it (its text in pytest's
output, the test's id in the merged JSON) and leaves the others passing, a report outside any test
fails the session, and without --streamcheck the plugin does nothing.

usage: plugin.py (PYTHON_PACKAGE_DIR | installed) LIBRARY PYPROJECT SAMPLE_DIR [gpu]

The package's Python files are copied beside an empty __init__.py (the compiled module is not
needed) with a dist-info folder holding the entry point. With `installed`, the plugin is the one
installed in this Python's environment (a wheel's: scripts/wheel-gpu-check --streamcheck), whose
pytest11 entry point must be the one PYPROJECT declares; $STREAMLIKE_PACKAGE_SITE, where given, is the
environment's site folder, put first on the sessions' PYTHONPATH. On a CPU the sample's reports come from
stand_in_checker.py; with `gpu`, the sample is pytest_sample_gpu/ under the real checker (exits 77
without torch or a device, which STREAMLIKE_REQUIRE_GPU=1 turns into a failure).
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

installed = sys.argv[1] == "installed"
# With `installed`, the environment's own site folder goes first, ahead of any PYTHONPATH.
installed_site = os.environ.get("STREAMLIKE_PACKAGE_SITE") if installed else None
package_dir, library, pyproject, sample_dir = (os.path.abspath(a) for a in sys.argv[1:5])
gpu = sys.argv[5:] == ["gpu"]
here = os.path.dirname(os.path.abspath(__file__))
SKIP = 77
failures = []


def expect(condition, what, result=None):
    if not condition:
        failures.append(what + ("" if result is None else f"\n  stdout: {result.stdout}\n  stderr: {result.stderr}"))


def skip(why):
    if os.environ.get("STREAMLIKE_REQUIRE_GPU") == "1":
        print(f"plugin.py: {why}, and STREAMLIKE_REQUIRE_GPU=1 asks for a device")
        sys.exit(1)
    print(f"plugin.py: {why}; skipped")
    sys.exit(SKIP)


def device_problem():
    """Why no CUDA device can be used (asked of the driver in a child: this process stays CUDA-free)."""
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed"
    probe = (
        "import ctypes, sys\n"
        "try:\n    cuda = ctypes.CDLL('libcuda.so.1')\nexcept OSError:\n    sys.exit('no CUDA driver')\n"
        "n = ctypes.c_int(0)\n"
        "if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(n)) != 0 or n.value == 0:\n"
        "    sys.exit('no CUDA device')\n"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if r.returncode == 0:
        return None
    return r.stderr.strip() or f"the device probe failed ({r.returncode})"


if gpu and (problem := device_problem()) is not None:
    skip(problem)

with open(pyproject, encoding="utf-8") as f:  # tomllib is Python 3.11's: its one table read by hand
    table = re.search(r"^\[project\.entry-points\.pytest11\]\n((?:[^\[\n].*\n)*)", f.read(), re.M)
entry_points = dict(re.findall(r'^(\w+)\s*=\s*"([^"]+)"', table.group(1), re.M)) if table else {}
if not entry_points:
    sys.exit(f"plugin.py: {pyproject} declares no [project.entry-points.pytest11]")


def installed_plugin(site):
    """Where the plugin the pytest11 entry point names is installed (in `site` where given, else
    where this Python finds it), or exits naming what is wrong."""
    from importlib import metadata

    dists = metadata.distributions(path=[site]) if site else metadata.distributions()
    for dist in dists:
        declared = {ep.name: ep.value for ep in dist.entry_points if ep.group == "pytest11"}
        name = next(iter(entry_points))
        if declared.get(name) is not None:
            if {k: declared.get(k) for k in entry_points} != entry_points:
                sys.exit(
                    f"plugin.py: {dist.metadata['Name']}'s pytest11 entry points {declared} are not {entry_points}"
                )
            module = dist.locate_file(entry_points[name].replace(".", "/") + ".py")
            return f"{module} ({dist.metadata['Name']} {dist.version})"
    sys.exit(f"plugin.py: no installed distribution{' in ' + site if site else ''} declares the streamlike plugin")


with tempfile.TemporaryDirectory() as tmp:
    site = os.path.join(tmp, "site")
    if installed:
        print(f"plugin.py: the installed plugin: {installed_plugin(installed_site)}")
    else:
        os.makedirs(os.path.join(site, "streamlike"))
        open(os.path.join(site, "streamlike", "__init__.py"), "w").close()
        for name in ("check.py", "_check_child.py", "pytest_plugin.py"):
            shutil.copy(os.path.join(package_dir, name), os.path.join(site, "streamlike", name))
        info = os.path.join(site, "streamlike-0.dist-info")
        os.makedirs(info)
        with open(os.path.join(info, "METADATA"), "w") as f:
            f.write("Metadata-Version: 2.1\nName: streamlike\nVersion: 0\n")
        with open(os.path.join(info, "entry_points.txt"), "w") as f:
            f.write("[pytest11]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items()))
    suite = os.path.join(tmp, "suite")
    shutil.copytree(sample_dir, suite)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("STREAMLIKE_CHECK", "PYTEST_")) and k != "CUDA_INJECTION64_PATH"
    }
    first = ([installed_site] if installed_site else []) + [here] if installed else [site, here]
    env["PYTHONPATH"] = os.pathsep.join(first + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["STREAMLIKE_CHECK_LIBRARY"] = library

    def pytest(*args):
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
            cwd=suite,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    sample = "test_gpu_sample.py" if gpu else "test_sample.py"
    with open(os.path.join(suite, sample), encoding="utf-8") as f:
        bug_line = next(i for i, line in enumerate(f, 1) if line.rstrip().endswith("# the bug") or "# the bug:" in line)

    r = pytest("--streamcheck", "--streamcheck-json", "merged.json", sample)
    if gpu and re.search(r"\bskipped\b", r.stdout) and "passed" not in r.stdout:
        skip("the GPU sample skipped: " + r.stdout.strip().splitlines()[-1])
    expect(r.returncode == 1, "--streamcheck: the session fails (exit 1)", r)
    expect(f"FAILED {sample}::test_buggy" in r.stdout, "the buggy test fails", r)
    expect(f"PASSED {sample}::test_clean" in r.stdout, "the clean test passes", r)
    if not gpu:
        expect(f"PASSED {sample}::test_clean_after_the_bug" in r.stdout, "a clean test after the bug passes", r)
        expect("1 failed, 2 passed" in r.stdout, "one failure, two passes", r)
    expect(
        "streamcheck: wrong stream: " in r.stdout and f"at {os.path.join(suite, sample)}:{bug_line}" in r.stdout,
        f"the report's text, with the bug's line ({bug_line}), is in pytest's output",
        r,
    )
    expect("streamcheck: FAIL: " in r.stderr, "the command fails the run too, saying why", r)
    # The checker's start line names the CUPTI it found ("... CUDA driver calls (LIBCUPTI, HOW)").
    started = re.search(r"^streamcheck: checking .* CUDA driver calls \((.*)\)$", r.stderr, re.M)
    cupti = f"; CUPTI: {started.group(1)}" if started else ""
    merged_path = os.path.join(suite, "merged.json")
    merged = json.load(open(merged_path, encoding="utf-8")) if os.path.exists(merged_path) else {}
    blamed = [x.get("test") for x in merged.get("reports", []) if not x.get("allowed")]
    expect(blamed == [f"{sample}::test_buggy"], f"the merged JSON names the test of each report: {merged}", r)
    expect(
        merged.get("processes") and all(p["checked"] and p["summarized"] for p in merged["processes"]),
        f"the session's process was checked and summarized: {merged}",
        r,
    )

    if not gpu:
        r = pytest("--streamcheck", "outside_sample.py")
        expect(
            r.returncode == 1 and "1 passed" in r.stdout, "a report at import: the test passes, the session fails", r
        )
        expect("1 report(s) outside any test" in r.stdout, "the report outside any test is shown", r)

        r = pytest(sample)
        expect(r.returncode == 0 and "3 passed" in r.stdout, "without --streamcheck the plugin does nothing", r)
        expect("streamcheck" not in r.stdout, "without --streamcheck nothing of the plugin is printed", r)

        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "streamlike.check",
                "--fail",
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-rA",
                sample,
            ],
            cwd=suite,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        expect(
            r.returncode == 1 and f"FAILED {sample}::test_buggy" in r.stdout and "1 failed, 2 passed" in r.stdout,
            "python -m streamlike.check -m pytest: the plugin fails the buggy test without --streamcheck",
            r,
        )

        r = pytest("--streamcheck", "--streamcheck-check", "bogus", sample)
        expect(
            r.returncode == 2 and "STREAMLIKE_CHECK='bogus': expected" in r.stderr and "passed" not in r.stdout,
            "a bad --streamcheck-check is refused before the session runs",
            r,
        )

if failures:
    print("FAILED:\n" + "\n\n".join(failures))
    sys.exit(1)
print(f"plugin: pytest --streamcheck fails the buggy test only ({'GPU' if gpu else 'CPU, stand-in reports'}{cupti})")
