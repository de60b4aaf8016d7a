"""python -m streamlike.check on a CPU: finds the checker library, runs the script with its
arguments as __main__, passes on its exit status, says plainly when there is no CUDA driver or no
library, and refuses bad options naming them.

usage: cli.py CHECK_PY LIBRARY"""

import ctypes
import os
import shutil
import subprocess
import sys
import tempfile

check_py, library = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])


def has_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def run(args, cwd, env_extra=None, module=False):
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIKE_CHECK") and k != "CUDA_INJECTION64_PATH"}
    env.update(env_extra or {})
    if module:
        env["PYTHONPATH"] = os.path.join(cwd, "pkg")
        command = [sys.executable, "-m", "streamlike.check"] + args
    else:
        command = [sys.executable, check_py] + args
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


failures = []


def expect(condition, what, result=None):
    if not condition:
        failures.append(
            what + ("" if result is None else f"\n  stdout: {result.stdout!r}\n  stderr: {result.stderr!r}")
        )


with tempfile.TemporaryDirectory() as tmp:
    script = os.path.join(tmp, "program.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(
            "import os, sys\n"
            "print('ran as', __name__, 'argv', sys.argv[1:])\n"
            "print('injection', os.environ.get('CUDA_INJECTION64_PATH'))\n"
            "print('check', os.environ.get('STREAMLIKE_CHECK'), os.environ.get('STREAMLIKE_CHECK_ALLOW'),\n"
            "      os.environ.get('STREAMLIKE_CHECK_FAIL'), os.environ.get('STREAMLIKE_CHECK_JSON'))\n"
            "print('frames', os.environ.get('STREAMLIKE_CHECK_PYTHON_FRAMES'))\n"
            "print('loaded', any('streamlike_check' in line for line in open('/proc/self/maps')))\n"
            "sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)\n"
        )
    # The same file as a package, for `python -m streamlike.check`.
    os.makedirs(os.path.join(tmp, "pkg", "streamlike"))
    open(os.path.join(tmp, "pkg", "streamlike", "__init__.py"), "w").close()
    shutil.copy(check_py, os.path.join(tmp, "pkg", "streamlike", "check.py"))

    for module in (False, True):
        r = run(
            [
                "--library",
                library,
                "--fail",
                "--allow",
                "lib:libnccl",
                "--allow",
                "py:torch.nn",
                "--json",
                "out.json",
                "program.py",
                "3",
                "--json",
                "x",
            ],
            tmp,
            module=module,
        )
        expect(r.returncode == 3, f"module={module}: the script's exit status 3 is passed on", r)
        expect(
            "ran as __main__ argv ['3', '--json', 'x']" in r.stdout,
            f"module={module}: runs as __main__ with its own arguments",
            r,
        )
        expect(f"injection {library}" in r.stdout, f"module={module}: CUDA_INJECTION64_PATH names the library", r)
        expect(
            f"check wrong-stream,capture lib:libnccl,py:torch.nn 1 {os.path.join(tmp, 'out.json')}" in r.stdout,
            f"module={module}: the options reach the library's environment",
            r,
        )
        expect("frames 1" in r.stdout, f"module={module}: Python call sites asked for", r)
        expect(
            "loaded False" in r.stdout,
            f"module={module}: the library is left for the driver to load (not loaded before the script)",
            r,
        )
        if not has_driver():
            expect(
                "streamcheck: no CUDA driver" in r.stderr and "runs unchecked" in r.stderr,
                f"module={module}: says there is no driver",
                r,
            )

    r = run(["--library", library, "--check", "capture", "program.py"], tmp)
    expect(r.returncode == 0 and "check capture None None None" in r.stdout, "--check capture alone", r)

    r = run(["--library", os.path.join(tmp, "missing.so"), "program.py"], tmp, {"STREAMLIKE_CHECK_LIBRARY": ""})
    expect(
        r.returncode == 2 and "libstreamlike_check.so not found" in r.stderr and "ran as" not in r.stdout,
        "a missing library is an error, and the script does not run unchecked",
        r,
    )

    r = run(["--library", library, "--chek", "all", "program.py"], tmp)
    expect(r.returncode == 2 and "--chek" in r.stderr, "an unknown option is named", r)

    r = run(["--library", library], tmp)
    expect(r.returncode == 2 and "name a script to run" in r.stderr, "no script: says so", r)

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
        env={**os.environ, "LD_PRELOAD": library},
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
