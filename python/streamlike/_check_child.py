"""The program's first code under ``python -m streamlike.check``: runs the script or module as
``__main__`` and, at exit, tells the command what the checker library cannot: whether this process
started CUDA without the checker (docs/streamcheck.md, "What the command knows").

usage: python _check_child.py (-m MODULE | SCRIPT) [ARGS...]

Standard library only, and nothing at import that could start CUDA. It is run by its path, so that
it works beside a bare check.py as well as from the installed package; sys.path[0] is set to what
`python SCRIPT` or `python -m MODULE` would give, never this file's folder.
"""

import atexit
import ctypes
import json
import os
import runpy
import sys

RECORDS = os.environ.get("STREAMLIKE_CHECK_RECORDS")  # read now: the program may change os.environ
INJECTION = os.environ.get("CUDA_INJECTION64_PATH")
CUDA_ERROR_NOT_INITIALIZED = 3


def mapped_libraries():
    """The paths of the shared libraries mapped into this process."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            return {line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) == 6}
    except OSError:
        return set()


def cuda_state(libraries):
    """'unused' (no driver in the process), 'loaded' (the driver loaded but never initialized, or its
    initialization failed: no work can have run) or 'initialized'."""
    drivers = [p for p in libraries if os.path.basename(p).startswith("libcuda.so")]
    if not drivers:
        return "unused"
    try:
        driver = ctypes.CDLL(drivers[0], mode=os.RTLD_NOLOAD)
        count = ctypes.c_int(0)
        # Before cuInit, cuDeviceGetCount answers CUDA_ERROR_NOT_INITIALIZED and starts nothing.
        return "initialized" if driver.cuDeviceGetCount(ctypes.byref(count)) == 0 else "loaded"
    except (OSError, AttributeError):
        return "loaded"


def checker_active(libraries):
    """streamlike_check_active() of the checker library mapped here, None where none is."""
    for path in libraries:
        if "libstreamlike_check" in os.path.basename(path):
            try:
                return ctypes.CDLL(path, mode=os.RTLD_NOLOAD).streamlike_check_active()
            except (OSError, AttributeError):
                return -1
    return None


def write_atomically(path, value):
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        json.dump(value, f)
    os.replace(temporary, path)


def unchecked_reason(libraries):
    """Why a process that initialized CUDA left no record of the checker's."""
    now = os.environ.get("CUDA_INJECTION64_PATH")
    active = checker_active(libraries)
    if active is None:
        if now != INJECTION:
            return (
                f"CUDA was initialized without the checker: the program changed CUDA_INJECTION64_PATH "
                f"(from {INJECTION!r} to {now!r}) before CUDA started"
            )
        return (
            f"CUDA was initialized but the driver did not load the checker library "
            f"(CUDA_INJECTION64_PATH={INJECTION!r}): another injection, or a library the loader refused"
        )
    return (
        f"the checker library is loaded (streamlike_check_active() = {active}) but wrote no record: "
        "it is older than this command, or its records folder could not be written"
    )


def at_exit():
    if not RECORDS:
        return
    libraries = mapped_libraries()
    pid = os.getpid()
    cuda = cuda_state(libraries)
    try:
        record = os.path.join(RECORDS, f"streamcheck-{pid}.json")
        if cuda == "initialized" and not os.path.exists(record):
            write_atomically(
                record,
                {
                    "schema": "streamlike.check.process/1",
                    "pid": pid,
                    "ppid": os.getppid(),
                    "argv": list(sys.argv),
                    "checked": False,
                    "why_unchecked": unchecked_reason(libraries),
                    "summarized": True,
                    "wrong_stream": 0,
                    "capture_breaker": 0,
                    "allowed": 0,
                    "reports": [],
                },
            )
        write_atomically(
            os.path.join(RECORDS, f"bootstrap-{pid}.json"),
            {"schema": "streamlike.check.bootstrap/1", "pid": pid, "cuda": cuda},
        )
    except OSError as e:  # the command names the missing note
        print(f"streamcheck: cannot write to the records folder {RECORDS}: {e}", file=sys.stderr)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    # Registered first, so it runs last: after the program's own exit handlers, which may use CUDA.
    atexit.register(at_exit)
    if args[0] == "-m":
        sys.argv = [args[1]] + args[2:]
        sys.path[0] = os.getcwd()
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        # As `python SCRIPT`: sys.argv[0] as given, __file__ (and the code's file name) absolute.
        sys.argv = args
        script = os.path.abspath(args[0])
        sys.path[0] = os.path.dirname(script)
        runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
