"""streamcheck for Python programs: ``python -m streamlike.check [options] script.py [args]``.

Runs the script with libstreamlike_check.so injected into the CUDA driver (CUDA_INJECTION64_PATH:
the driver loads it when the script first initializes CUDA), which reports launches and copies on a
stream other than the thread's current stream, and calls that break an active CUDA graph capture,
each once per call site with its Python file:line (docs/streamcheck.md). Only the standard library
is used here, so that the checker's setup happens before the script imports torch or CuPy.
"""

import argparse
import ctypes
import os
import runpy
import sys

_LIBRARY = "libstreamlike_check.so"


def _find_library(given):
    """The checker library: --library, $STREAMLIKE_CHECK_LIBRARY, then beside this package."""
    candidates = [given, os.environ.get("STREAMLIKE_CHECK_LIBRARY"), os.path.join(os.path.dirname(__file__), _LIBRARY)]
    for path in candidates:
        if path and os.path.isfile(path):
            return os.path.abspath(path)
    return None


def _has_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m streamlike.check",
        description="Run a Python program with streamcheck: wrong-stream launches and capture breakers, "
        "reported per call site (docs/streamcheck.md).",
    )
    p.add_argument(
        "--check",
        default="wrong-stream,capture",
        help="what to check: wrong-stream, capture or both, comma-separated (default: both)",
    )
    p.add_argument("--output", metavar="FILE", help="write the reports to FILE instead of stderr")
    p.add_argument("--json", metavar="FILE", help="write a JSON summary of the reports to FILE at exit")
    p.add_argument("--fail", action="store_true", help="exit with status 1 when anything was reported")
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="ENTRY",
        help="not reported when the call site matches: lib:TEXT (a library path), sym:TEXT (a native "
        "symbol) or py:MODULE (a Python module); repeatable",
    )
    p.add_argument("--library", metavar="PATH", help=f"the checker library ({_LIBRARY}) to inject")
    p.add_argument("-m", dest="module", metavar="MODULE", help="run a module as `python -m MODULE` does")
    p.add_argument("script", nargs="?", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


def _environment(options, library):
    env = {
        "STREAMLIKE_CHECK": options.check,
        "CUDA_INJECTION64_PATH": library,
        # The library looks up the Python C API itself when the driver loads it: loading it here,
        # before torch or CuPy, would bring in its CUDA runtime ahead of theirs.
        "STREAMLIKE_CHECK_PYTHON_FRAMES": "1",
    }
    if options.output:
        env["STREAMLIKE_CHECK_OUTPUT"] = os.path.abspath(options.output)
    if options.json:
        env["STREAMLIKE_CHECK_JSON"] = os.path.abspath(options.json)
    if options.fail:
        env["STREAMLIKE_CHECK_FAIL"] = "1"
    if options.allow:
        env["STREAMLIKE_CHECK_ALLOW"] = ",".join(options.allow)
    return env


def main(argv=None):
    parser = _parser()
    options = parser.parse_args(argv)
    if options.module is None and options.script is None:
        parser.error("name a script to run (or -m MODULE)")
    if options.module is not None and options.script is not None:
        # `-m mod a b`: the positional words are the module's arguments.
        options.args = [options.script] + options.args
        options.script = None

    library = _find_library(options.library)
    if library is None:
        print(
            f"streamcheck: {_LIBRARY} not found (looked at --library, $STREAMLIKE_CHECK_LIBRARY and "
            f"{os.path.dirname(os.path.abspath(__file__))}); build it with the C++ library "
            "(meson: src/streamcheck) and pass --library PATH",
            file=sys.stderr,
        )
        return 2
    # The environment first: the driver reads it when it initializes (the script's first CUDA call),
    # and child processes inherit it.
    os.environ.update(_environment(options, library))
    if not _has_driver():
        print(
            "streamcheck: no CUDA driver in this process (libcuda.so.1 cannot be loaded): nothing to check; "
            "the program runs unchecked",
            file=sys.stderr,
        )

    if options.module is not None:
        sys.argv = [options.module] + options.args
        runner = lambda: runpy.run_module(options.module, run_name="__main__", alter_sys=True)  # noqa: E731
    else:
        sys.argv = [options.script] + options.args
        sys.path.insert(0, os.path.dirname(os.path.abspath(options.script)))
        runner = lambda: runpy.run_path(options.script, run_name="__main__")  # noqa: E731
    try:
        runner()
    except SystemExit as e:
        return e.code
    return 0


if __name__ == "__main__":
    sys.exit(main())
