"""python -m streamlike.check on a CPU: runs the program in a child process with the checker's
environment, passes on its exit status, merges every process's record (written here by
stand_in_checker.py, as the library writes them) into --json, --sarif and --output, fails under
--fail exactly when the run is not clean, and refuses bad command lines and values before the
program starts. Then the library's Python call sites, asked of it directly.

usage: cli.py CHECK_PY LIBRARY SCHEMA STAND_IN_DRIVER (a libcuda.so.1 of cuInit and cuDeviceGetCount)"""

import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile

import json_schema

check_py, library, schema_path, stand_in_driver = (os.path.abspath(a) for a in sys.argv[1:5])
here = os.path.dirname(os.path.abspath(__file__))
with open(schema_path, encoding="utf-8") as f:
    schema = json.load(f)


def has_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def clean_env():
    return {
        k: v for k, v in os.environ.items() if not k.startswith("STREAMLIKE_CHECK") and k != "CUDA_INJECTION64_PATH"
    }


def run(args, cwd, env_extra=None, module=False):
    env = clean_env()
    env["PYTHONPATH"] = here  # the stand-in
    if module:
        env["PYTHONPATH"] += os.pathsep + os.path.join(cwd, "pkg")
        command = [sys.executable, "-m", "streamlike.check"] + args
    else:
        command = [sys.executable, check_py] + args
    env.update(env_extra or {})
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


failures = []


def expect(condition, what, result=None):
    if not condition:
        failures.append(
            what + ("" if result is None else f"\n  stdout: {result.stdout!r}\n  stderr: {result.stderr!r}")
        )


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


with tempfile.TemporaryDirectory() as tmp:
    write(
        os.path.join(tmp, "program.py"),
        "import os, sys\n"
        "print('ran as', __name__, 'argv', sys.argv[1:])\n"
        "print('path0', sys.path[0])\n"
        "print('injection', os.environ.get('CUDA_INJECTION64_PATH'))\n"
        "print('check', os.environ.get('STREAMLIKE_CHECK'), os.environ.get('STREAMLIKE_CHECK_ALLOW'),\n"
        "      os.environ.get('STREAMLIKE_CHECK_FAIL'), os.environ.get('STREAMLIKE_CHECK_JSON'))\n"
        "print('frames', os.environ.get('STREAMLIKE_CHECK_PYTHON_FRAMES'))\n"
        "print('records', os.path.isdir(os.environ.get('STREAMLIKE_CHECK_RECORDS', '')))\n"
        "print('loaded', any('streamlike_check' in line for line in open('/proc/self/maps')))\n"
        "sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)\n",
    )
    # The same command as a package, for `python -m streamlike.check`.
    os.makedirs(os.path.join(tmp, "pkg", "streamlike"))
    open(os.path.join(tmp, "pkg", "streamlike", "__init__.py"), "w").close()
    for name in ("check.py", "_check_child.py"):
        shutil.copy(os.path.join(os.path.dirname(check_py), name), os.path.join(tmp, "pkg", "streamlike", name))
    os.makedirs(os.path.join(tmp, "mod"))
    write(os.path.join(tmp, "mod", "__init__.py"), "")
    write(
        os.path.join(tmp, "mod", "__main__.py"),
        "import os, sys\nprint('module argv', sys.argv[1:])\nprint('path0', sys.path[0])\n",
    )

    for module in (False, True):
        how = f"module={module}"
        r = run(["--library", library, "--fail", "--allow", "lib:libnccl", "--allow", "py:torch.nn", "program.py", "3",
                 "--json", "x", "--fail"], tmp, module=module)  # fmt: skip
        expect(r.returncode == 3, f"{how}: the script's exit status 3 is passed on", r)
        expect("ran as __main__ argv ['3', '--json', 'x', '--fail']" in r.stdout, f"{how}: its own arguments", r)
        expect(f"path0 {tmp}\n" in r.stdout, f"{how}: sys.path[0] is the script's folder, not the package's", r)
        expect(f"injection {library}" in r.stdout, f"{how}: CUDA_INJECTION64_PATH names the library", r)
        expect(
            "check wrong-stream,capture lib:libnccl,py:torch.nn None None" in r.stdout,
            f"{how}: the options reach the library's environment (the command, not the library, fails the run)",
            r,
        )
        expect("frames 1" in r.stdout and "records True" in r.stdout, f"{how}: Python frames and records asked", r)
        expect("loaded False" in r.stdout, f"{how}: the library is left for the driver to load", r)
        expect(
            "no process of the program initialized CUDA (nothing to check)" in r.stderr,
            f"{how}: a run without CUDA says that nothing was checked",
            r,
        )

    # -m: everything after the module is the module's, verbatim.
    r = run(["--library", library, "--fail", "-m", "mod", "-q", "-x", "-k", "name", "--fail", "--json", "y"], tmp)
    expect(
        r.returncode == 0 and "module argv ['-q', '-x', '-k', 'name', '--fail', '--json', 'y']" in r.stdout,
        "-m MODULE: its arguments verbatim",
        r,
    )
    expect(f"path0 {tmp}\n" in r.stdout, "-m MODULE: sys.path[0] is the working folder, as python -m has it", r)

    # A bare name: a file is a script; else a command on PATH, run as that program with the environment.
    bin_dir = os.path.join(tmp, "bin")
    os.makedirs(bin_dir)
    write(os.path.join(bin_dir, "sometool"), '#!/bin/sh\necho "tool $* injection=$CUDA_INJECTION64_PATH"\nexit 4\n')
    write(os.path.join(bin_dir, "pytool"), f"#!{sys.executable}\nimport sys\nprint('pytool', sys.argv[1:])\n")
    for name in ("sometool", "pytool"):
        os.chmod(os.path.join(bin_dir, name), 0o755)
    path_env = {"PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    r = run(["--library", library, "sometool", "-q"], tmp, path_env)
    expect(
        r.returncode == 4 and f"tool -q injection={library}" in r.stdout,
        "a command on PATH runs as that program, with the environment, its status passed on",
        r,
    )
    r = run(["--library", library, "--fail", "sometool"], tmp, path_env)
    expect(
        r.returncode == 1 and "cannot tell whether the program used CUDA" in r.stderr,
        "--fail: a program the command cannot watch, that started no checker, is not a pass",
        r,
    )
    r = run(["--library", library, "--fail", "pytool", "a"], tmp, path_env)
    expect(
        r.returncode == 0 and "pytool ['a']" in r.stdout and "nothing to check" in r.stderr,
        "a console script of this Python runs through the bootstrap (it can say it used no CUDA)",
        r,
    )
    r = run(["--library", library, "--fail", "--json", "out.json", "nosuch"], tmp, path_env)
    expect(
        r.returncode == 2
        and r.stderr.strip()
        == "streamcheck: no such script or program: nosuch (a Python file, -m MODULE, or a command on PATH)",
        "a missing script: one line naming it, exit 2, no traceback",
        r,
    )

    # Values the library would refuse, refused before the program starts, in the library's words.
    for args, expected in (
        (["--check", "bogus"], "streamcheck: STREAMLIKE_CHECK='bogus': expected a comma-separated list of"),
        (["--allow", "lib:x", "--allow", "py:a/b"], "streamcheck: STREAMLIKE_CHECK_ALLOW='lib:x,py:a/b': expected"),
        (["--allow", "nccl"], "streamcheck: STREAMLIKE_CHECK_ALLOW='nccl': expected comma-separated lib:TEXT"),
        (["--check", "off"], "streamcheck: --check 'off' checks nothing"),
    ):
        r = run(["--library", library] + args + ["program.py"], tmp)
        expect(
            r.returncode == 2 and r.stderr.startswith(expected) and "ran as" not in r.stdout,
            f"{args}: refused before the program starts",
            r,
        )
    r = run(["--library", library, "program.py"], tmp, {"STREAMLIKE_CHECK_ALLOW": "py:"})
    expect(r.returncode == 2 and "STREAMLIKE_CHECK_ALLOW='py:'" in r.stderr, "an inherited bad value is refused too", r)
    r = run(["--library", os.path.join(tmp, "missing.so"), "program.py"], tmp, {"STREAMLIKE_CHECK_LIBRARY": ""})
    expect(
        r.returncode == 2 and "libstreamlike_check.so not found" in r.stderr and "ran as" not in r.stdout,
        "a missing library is an error, and the script does not run unchecked",
        r,
    )
    r = run(["--library", library, "--chek", "all", "program.py"], tmp)
    expect(r.returncode == 2 and "--chek" in r.stderr and "ran as" not in r.stdout, "an unknown option is named", r)
    r = run(["--library", library, "--js", "out.json", "program.py"], tmp)
    expect(r.returncode == 2 and "--js" in r.stderr and "ran as" not in r.stdout, "no abbreviated option", r)
    r = run(["--library", library], tmp)
    expect(r.returncode == 2 and "name a script to run" in r.stderr, "no script: says so", r)
    r = run(["--help"], tmp)
    expect(r.returncode == 0 and "-m module" in r.stdout and "--sarif" in r.stdout, "--help", r)

    # The records merged: two processes (the program and a child it starts), each reporting.
    write(
        os.path.join(tmp, "two.py"),
        "import subprocess, sys\n"
        "import stand_in_checker as checker\n"
        "checker.report()\n"
        "checker.report(kind='capture-breaker', api='cuStreamSynchronize')\n"
        "checker.report(api='cuMemsetD8Async', allowed=True)\n"
        "subprocess.run([sys.executable, 'child.py'], check=True)\n"
        "sys.exit(5)\n",
    )
    write(os.path.join(tmp, "child.py"), "import stand_in_checker as checker\nchecker.report()\n")
    r = run(
        ["--library", library, "--json", "merged.json", "--sarif", "out.sarif", "--output", "out.txt", "two.py"], tmp
    )
    expect(r.returncode == 5, "without --fail, the program's status is the command's", r)
    merged = load(os.path.join(tmp, "merged.json"))
    expect(json_schema.errors(merged, schema) == [], f"the merged JSON conforms: {json_schema.errors(merged, schema)}")
    expect(merged["exit_status"] == 5 and len(merged["processes"]) == 2, f"two processes, the status: {merged}")
    expect(
        (merged["wrong_stream"], merged["capture_breaker"], merged["allowed"]) == (2, 1, 1),
        f"the counts summed over the processes: {merged}",
    )
    parent = [p for p in merged["processes"] if p["argv"] and p["argv"][0].endswith("two.py")]
    expect(len(parent) == 1 and parent[0]["summarized"] and parent[0]["checked"], f"the program's process: {merged}")
    pids = {p["pid"] for p in merged["processes"]}
    expect(
        len(merged["reports"]) == 4 and {x["pid"] for x in merged["reports"]} == pids,
        f"each report carries its process's pid: {merged['reports']}",
    )
    expect(
        merged["reports"][0]["python"] == os.path.join(tmp, "two.py") + ":3",
        f"the reports as the records hold them: {merged['reports']}",
    )
    expect("2 wrong-stream and 1 capture-breaker call site(s) reported" in r.stderr, "the counts on stderr", r)
    with open(os.path.join(tmp, "out.txt"), encoding="utf-8") as f:
        text = f.read()
    sections = [line for line in text.splitlines() if line.startswith("== streamcheck: process ")]
    expect(
        len(sections) == 2 and text.count("(a stand-in)") == 2 and f"{os.path.join(tmp, 'two.py')}:3" in text,
        f"--output: each process's text under its own header: {text!r}",
    )
    expect("at " + os.path.join(tmp, "two.py") not in r.stderr, "--output: the reports are not on stderr", r)
    log = load(os.path.join(tmp, "out.sarif"))
    expect(log.get("version") == "2.1.0" and "sarif-2.1.0" in log.get("$schema", ""), f"SARIF version: {log}")
    runs = log.get("runs", [])
    expect(len(runs) == 1 and runs[0]["tool"]["driver"]["name"] == "streamcheck", f"SARIF tool: {log}")
    results = runs[0]["results"] if runs else []
    expect(len(results) == 4, f"one SARIF result per report: {results}")
    for result in results:
        location = result.get("locations", [{}])[0].get("physicalLocation", {})
        expect(
            result.get("ruleId") in ("wrong-stream", "capture-breaker")
            and "pass the current stream" in result.get("message", {}).get("text", "")
            and location.get("artifactLocation", {}).get("uri") in ("two.py", "child.py")
            and isinstance(location.get("region", {}).get("startLine"), int),
            f"a SARIF result with its rule, fix and Python file:line: {result}",
        )
    expect(
        [x["ruleId"] for x in results[:2]] == ["wrong-stream", "capture-breaker"]
        and results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 3,
        f"SARIF rules and lines: {results}",
    )
    expect(
        results[2].get("suppressions") and results[2]["level"] == "note",
        f"an allowed report is a suppressed note: {results}",
    )

    # --fail: what fails the run, each with a line saying why.
    cases = {
        "reported": ("import stand_in_checker as c\nc.report()\n", 1, "1 wrong-stream and 0 capture-breaker"),
        "allowed-only": ("import stand_in_checker as c\nc.report(allowed=True)\n", 0, None),
        "clean": ("import stand_in_checker as c\nc.start()\nraise SystemExit(3)\n", 3, None),
        "os-exit": ("import os, stand_in_checker as c\nc.start()\nos._exit(0)\n", 1, "ended without its summary"),
        "unchecked": (
            "import stand_in_checker as c\nc.start(checked=False, why_unchecked='another CUPTI client holds them')\n",
            1,
            "used CUDA unchecked: another CUPTI client holds them",
        ),
        "killed": ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", 1, "ended before saying whether"),
        "child-os-exit": (
            "import subprocess, sys\n"
            "subprocess.run([sys.executable, '-c', 'import os, stand_in_checker as c; c.start(); os._exit(0)'])\n",
            1,
            "ended without its summary",
        ),
    }
    for name, (source, status, why) in cases.items():
        write(os.path.join(tmp, f"{name}.py"), source)
        r = run(["--library", library, "--fail", "--json", f"{name}.json", f"{name}.py"], tmp)
        expect(r.returncode == status, f"--fail, {name}: exit {status}", r)
        document = load(os.path.join(tmp, f"{name}.json"))
        if why is None:
            expect(document["problems"] == [] and "FAIL" not in r.stderr, f"--fail, {name}: no problem", r)
        else:
            expect(
                any(why in p for p in document["problems"]) and "streamcheck: FAIL: " in r.stderr and why in r.stderr,
                f"--fail, {name}: the line says why ({why})",
                r,
            )
        expect(json_schema.errors(document, schema) == [], f"{name}: conforms: {json_schema.errors(document, schema)}")
    # What only the bootstrap can see: a Python process that initialized CUDA without the checker
    # (the stand-in driver, loaded by path, stands for libcuda.so.1).
    init = f"import ctypes\ncuda = ctypes.CDLL({stand_in_driver!r})\n"
    cases = {
        "no-checker": (
            init + "assert cuda.cuInit(0) == 0\n",
            1,
            "CUDA was initialized but the driver did not load the checker library",
        ),
        "injection-changed": (
            "import os\nos.environ['CUDA_INJECTION64_PATH'] = ''\n" + init + "cuda.cuInit(0)\n",
            1,
            "the program changed CUDA_INJECTION64_PATH",
        ),
        "checker-silent": (
            f"import ctypes\nctypes.CDLL({library!r})\n" + init + "cuda.cuInit(0)\n",
            1,
            "the checker library is loaded (streamlike_check_active() = 0) but wrote no record",
        ),
        "loaded-only": (init, 0, None),
    }
    for name, (source, status, why) in cases.items():
        write(os.path.join(tmp, f"{name}.py"), source)
        r = run(["--library", library, "--fail", "--json", f"{name}.json", f"{name}.py"], tmp)
        expect(r.returncode == status, f"--fail, {name}: exit {status}", r)
        document = load(os.path.join(tmp, f"{name}.json"))
        if why is None:
            expect(
                document["problems"] == []
                and document["processes"] == []
                and "loaded the CUDA driver but never initialized CUDA" in r.stderr,
                f"{name}: a driver loaded but never initialized: nothing to check, said so",
                r,
            )
        else:
            unchecked = [p for p in document["processes"] if not p["checked"]]
            expect(
                len(unchecked) == 1 and why in (unchecked[0]["why_unchecked"] or "") and why in r.stderr,
                f"{name}: the bootstrap's record says why ({why}): {document}",
                r,
            )
    r = run(["--library", library, "killed.py"], tmp)
    expect(r.returncode == 137 and "ended before saying" in r.stderr, "without --fail: the signal's status, and why", r)

    # The library on its own, preloaded into a program that makes no CUDA call: a bad option value
    # is named, and off loads nothing to check.
    env = {"LD_PRELOAD": library, "STREAMLIKE_CHECK": "sideways"}
    r = subprocess.run(
        [sys.executable, "-c", "print('alive')"], env={**os.environ, **env}, capture_output=True, text=True
    )
    expect(
        r.returncode == 0 and "alive" in r.stdout and "STREAMLIKE_CHECK='sideways'" in r.stderr,
        "LD_PRELOAD: a bad STREAMLIKE_CHECK is named and the program runs",
        r,
    )
    r = subprocess.run(
        [sys.executable, "-c", "print('alive')"],
        env={**clean_env(), "LD_PRELOAD": library},
        capture_output=True,
        text=True,
    )
    expect(r.returncode == 0 and r.stderr == "", "LD_PRELOAD without STREAMLIKE_CHECK: silent", r)

# The Python file:line a report names, asked of the library as a report would ask it: the caller's
# line, skipping a frame in site-packages, whether the caller holds the GIL (ctypes.PyDLL) or
# released it around the call (ctypes.CDLL), as CuPy's launches and torch's synchronizations do,
# on the main thread or another; nothing before streamlike_check_use_python_frames.
with tempfile.TemporaryDirectory() as tmp:
    site = os.path.join(tmp, "env", "lib", "site-packages")
    os.makedirs(site)
    with open(os.path.join(site, "framework.py"), "w", encoding="utf-8") as f:
        f.write(
            "import ctypes\n"
            "def launch(lib):\n"
            "    buffer = ctypes.create_string_buffer(4096)\n"
            "    lib.streamlike_check_python_location(buffer, 4096)\n"
            "    return buffer.value.decode()\n"
        )
    script = os.path.join(tmp, "user.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(
            "import ctypes, sys\n"
            f"sys.path.insert(0, {site!r})\n"
            "import framework\n"
            f"with_gil = ctypes.PyDLL({library!r})\n"
            f"without_gil = ctypes.CDLL({library!r})\n"
            "def ask(lib):\n"
            "    buffer = ctypes.create_string_buffer(4096)\n"
            "    lib.streamlike_check_python_location(buffer, 4096)\n"
            "    return buffer.value.decode()\n"
            "print('before', repr(ask(with_gil)))\n"
            "print('enabled', with_gil.streamlike_check_use_python_frames())\n"
            "print('direct', ask(with_gil))\n"
            "print('through', framework.launch(with_gil))\n"
            "print('nogil', ask(without_gil))\n"
            "print('nogil-through', framework.launch(without_gil))\n"
            "import threading\n"
            "seen = []\n"
            "def work():\n"
            "    seen.append(ask(without_gil))\n"
            "t = threading.Thread(target=work)\n"
            "t.start()\n"
            "t.join()\n"
            "print('thread', seen[0])\n"
        )
    r = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=60)
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    expect(lines.get("before") == "''", "no Python location before streamlike_check_use_python_frames", r)
    expect(lines.get("enabled") == "1", "streamlike_check_use_python_frames finds the Python C API", r)
    # The innermost frame: ask(), line 8 of user.py; through framework.py in site-packages: its
    # caller, line 13.
    expect(lines.get("direct") == f"{script}:8", "the innermost frame's file:line", r)
    expect(lines.get("through") == f"{script}:13", "frames in site-packages are skipped", r)
    expect(lines.get("nogil") == f"{script}:8", "the GIL released around the call: the caller's line", r)
    expect(
        lines.get("nogil-through") == f"{script}:15",
        "the GIL released inside a framework: the line that called the framework",
        r,
    )
    expect(lines.get("thread") == f"{script}:8", "another Python thread, the GIL released: its own line", r)

# A thread that released the GIL names its own line while another thread holds the GIL: before
# 3.12 the thread state "current" in the process is the GIL holder's, never the asking thread's.
# One thread spins in Python; the other asks from a call made with the GIL released (ctypes.CDLL),
# handing the GIL to the spinning one first: the call's third argument, which the function
# ignores, is a long str that ctypes turns into a wide string while holding the GIL, long enough
# for the spinning thread to ask for it, so that the release before the call waits until the
# spinning thread holds it (CPython's forced switching).
with tempfile.TemporaryDirectory() as tmp:
    script = os.path.join(tmp, "threads.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(
            "import ctypes, sys, threading\n"
            f"lib = ctypes.CDLL({library!r})\n"
            "locate = lib.streamlike_check_python_location\n"
            "locate.argtypes = [ctypes.c_char_p, ctypes.c_size_t]\n"
            "ballast = 'x' * 5_000_000\n"
            "def ask():\n"
            "    buffer = ctypes.create_string_buffer(4096)\n"
            "    locate(buffer, 4096, ballast)\n"
            "    return buffer.value.decode()\n"
            "sys.setswitchinterval(0.001)\n"
            "ctypes.PyDLL(lib._name).streamlike_check_use_python_frames()\n"
            "spinning = threading.Event()\n"
            "stop = False\n"
            "def spin():\n"
            "    spinning.set()\n"
            "    n = 0\n"
            "    while not stop:\n"
            "        n += 1\n"
            "seen = []\n"
            "def asker():\n"
            "    spinning.wait()\n"
            "    for _ in range(10):\n"
            "        seen.append(ask())\n"
            "threads = [threading.Thread(target=spin), threading.Thread(target=asker)]\n"
            "for t in threads:\n"
            "    t.start()\n"
            "threads[1].join()\n"
            "stop = True\n"
            "threads[0].join()\n"
            "print('\\n'.join(seen))\n"
        )
    r = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=120)
    seen = r.stdout.splitlines()
    expect(
        r.returncode == 0 and len(seen) == 10 and all(line == f"{script}:8" for line in seen),
        f"the GIL released while another thread holds it: the asking thread's own line ({script}:8), "
        "never the spinning thread's (lines 17-18)",
        r,
    )

if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("cli: all checks passed")
