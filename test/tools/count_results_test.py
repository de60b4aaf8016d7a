""".ci/count_results.py on synthetic meson test logs: what CI's closing line counts and which
missing or skipped tests fail it. Usage: count_results_test.py COUNT_RESULTS_PY"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from expectations import expect, finish  # noqa: E402

script = sys.argv[1]


def entry(name, result, stdout=""):
    return {"name": name, "result": result, "stdout": stdout, "returncode": {"OK": 0, "SKIP": 77}.get(result, 1)}


def write(folder, file, lines):
    path = os.path.join(folder, file)
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    return path


def registered(folder, tests):
    path = os.path.join(folder, "tests.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump([{"name": name, "suite": [f"streamlike:{s}" for s in suites]} for name, suites in tests], f)
    return path


def run(*args):
    done = subprocess.run([sys.executable, script, *args], capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout


with tempfile.TemporaryDirectory() as tmp:
    build = write(
        tmp,
        "build.json",
        [
            entry("host - streamlike:stream_view", "OK"),
            entry("host - streamlike:capture_safety", "OK"),
            entry("bridge - streamlike:python-bridge", "OK"),
            entry("bridge+headers - streamlike:python-headers-g++", "OK"),
            entry("package - streamlike:package-cpu", "SKIP", "collected 12 items\nSKIP mypy is not installed"),
            entry("gpu - streamlike:gpu_stream_view", "SKIP", "no CUDA device"),
            entry("adapters - streamlike:rmm_gpu", "SKIP", "no CUDA device"),
        ],
    )
    asan = write(tmp, "asan.json", [entry("host - streamlike:stream_view", "OK")])
    tsan_skipped = write(tmp, "tsan.json", [entry("host - streamlike:stream_view", "SKIP", "no tsan runtime")])

    rc, out = run(build)
    last = out.strip().splitlines()[-1] if out.strip() else ""
    expect("the closing line counts every result, and is the last line", last == "4 passed, 0 failed, 3 skipped", out)
    expect("without requirements, skips alone do not fail", rc == 0, out)

    rc, out = run("--require", "host,bridge/python-bridge", build)
    expect("a required suite and a required SUITE/TEST that passed: exit 0", rc == 0, out)

    rc, out = run("--require", "package", build)
    expect(
        "a required suite that only skipped fails, naming the suite and the skipped test",
        rc == 1 and "suite package must run on CI, but it only skipped (package-cpu" in out,
        out,
    )

    rc, out = run("--require", "symbols", build)
    expect(
        "a required suite that is missing fails, saying no test of it ran",
        rc == 1 and "suite symbols must run on CI, but no test of it ran" in out,
        out,
    )

    rc, out = run("--require", "bridge/python-owned-stream", build)
    expect(
        "a required SUITE/TEST whose suite ran but not that test fails",
        rc == 1 and "test python-owned-stream of suite bridge" in out,
        out,
    )

    rc, out = run("--require", "asan", build, "asan=" + asan)
    expect("a sanitizer log's label is a suite: asan passed", rc == 0, out)
    expect(
        "a labelled log's tests count in the closing line",
        out.strip().splitlines()[-1] == "5 passed, 0 failed, 3 skipped",
        out,
    )

    rc, out = run("--require", "asan,tsan", build, "asan=" + asan, "tsan=" + tsan_skipped)
    expect(
        "a sanitizer label whose tests skipped fails, naming the label",
        rc == 1 and "suite tsan must run on CI, but it only skipped" in out,
        out,
    )

    rc, out = run("--require", "tsan", build, "tsan=" + os.path.join(tmp, "absent.json"))
    expect("an unreadable log fails and is named", rc == 1 and "cannot read" in out and "absent.json" in out, out)

    failed = write(
        tmp, "failed.json", [entry("host - streamlike:stream_view", "OK"), entry("host - streamlike:error", "FAIL")]
    )
    rc, out = run(failed)
    expect(
        "a failed test fails the count",
        rc == 1 and out.strip().splitlines()[-1] == "1 passed, 1 failed, 0 skipped",
        out,
    )

    rc, out = run(write(tmp, "skips.json", [entry("gpu - streamlike:gpu_x", "SKIP")]))
    expect("no pass at all fails", rc == 1 and "no test passed" in out, out)

    tests = registered(
        tmp,
        [
            ("stream_view", ["host"]),
            ("capture_safety", ["host"]),
            ("python-bridge", ["bridge"]),
            ("python-headers-g++", ["bridge", "headers"]),
            ("package-cpu", ["package"]),
            ("gpu_stream_view", ["gpu"]),
            ("rmm_gpu", ["adapters"]),
            ("across-the-boundary", ["symbols"]),
        ],
    )
    rc, out = run("--registered", tests, "--may-skip", "gpu,*_gpu", build)
    expect(
        "a registered test that skipped fails, with the last line it printed",
        rc == 1
        and "test package-cpu (suite package) must pass on CI, but it skipped: SKIP mypy is not installed" in out,
        out,
    )
    expect(
        "a registered test missing from the log fails, named",
        "test across-the-boundary (suite symbols) must pass on CI, but it is missing from the log" in out,
        out,
    )
    expect(
        "tests exempted by suite (gpu) and by name pattern (*_gpu) are not named",
        "gpu_stream_view" not in out and "rmm_gpu" not in out,
        out,
    )

    rc, out = run("--registered", tests, "--may-skip", "gpu,adapters/rmm_*,package,symbols/across-the-boundary", build)
    expect(
        "SUITE/TEST patterns and whole suites exempt: exit 0, saying how many may skip",
        rc == 0 and "every registered test passed, less 4 that may skip" in out,
        out,
    )

    rc, out = run("--registered", tests, build)
    expect(
        "without --may-skip every registered test must pass (the gpu skips fail too)",
        rc == 1 and "gpu_stream_view" in out and "rmm_gpu" in out,
        out,
    )

    host_tests = registered(tmp, [("stream_view", ["host"]), ("capture_safety", ["host"]), ("gpu_x", ["gpu"])])
    asan_both = write(
        tmp,
        "asan-both.json",
        [entry("host - streamlike:stream_view", "OK"), entry("host - streamlike:capture_safety", "OK")],
    )
    rc, out = run(
        "--registered", host_tests, "--may-skip", "gpu", "--require-all", "asan/host", build, "asan=" + asan_both
    )
    expect(
        "--require-all asan/host: every host test passed under asan: exit 0, saying how many",
        rc == 0 and "every host test (2) passed under asan" in out,
        out,
    )
    rc, out = run("--registered", host_tests, "--may-skip", "gpu", "--require-all", "asan/host", build, "asan=" + asan)
    expect(
        "--require-all asan/host: a host test missing from the asan log fails, named, though another passed",
        rc == 1 and "test capture_safety (suite host) must pass under asan on CI, but it is missing" in out,
        out,
    )
    asan_skip = write(
        tmp,
        "asan-skip.json",
        [entry("host - streamlike:stream_view", "OK"), entry("host - streamlike:capture_safety", "SKIP")],
    )
    rc, out = run(
        "--registered",
        host_tests,
        "--may-skip",
        "gpu",
        "--require-all",
        "asan/host,tsan/host",
        build,
        "asan=" + asan_skip,
        "tsan=" + asan_both,
    )
    expect(
        "--require-all: a host test that skipped under asan fails, named; tsan, complete, passes",
        rc == 1
        and "test capture_safety (suite host) must pass under asan on CI, but it skipped" in out
        and "under tsan" not in out.split("count_results: FAIL", 1)[-1],
        out,
    )
    rc, out = run("--require-all", "asan/host", build, "asan=" + asan_both)
    expect("--require-all without --registered fails, saying so", rc == 1 and "needs --registered" in out, out)

    rc, out = run("--registered", os.path.join(tmp, "absent-tests.json"), build)
    expect("an unreadable list of registered tests fails", rc == 1 and "cannot read the registered tests" in out, out)

finish("count_results_test")
