"""streamcheck for any program: ``python -m streamlike.check [options] (script.py | -m module | program) [args]``.

Runs the program in a child process with libstreamlike_check.so injected into the CUDA driver
(CUDA_INJECTION64_PATH: the driver loads it when the program first initializes CUDA), which reports
launches and copies on a stream other than the thread's current stream, and calls that break an
active CUDA graph capture, each once per call site with its Python file:line. Every process the
checker starts in writes a record into a private folder; at the end the command merges them
(--json, --sarif, --output) and, with --fail, fails a run with a report, a process that used CUDA
unchecked, or one that ended without its summary (docs/streamcheck.md). Standard library only.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

_LIBRARY = "libstreamlike_check.so"
_HERE = os.path.dirname(os.path.abspath(__file__))
MERGED_SCHEMA = "streamlike.check/1"
PROCESS_SCHEMA = "streamlike.check.process/1"
EXPLAINED = {
    "wrong-stream": "work not ordered with the current stream",
    "capture-breaker": "a call that breaks an active CUDA graph capture",
}

# --- The library's grammar for STREAMLIKE_CHECK and STREAMLIKE_CHECK_ALLOW ------------------------
# Mirrors src/streamcheck/options.cpp (parse_options) rule by rule and word for word, so that a value
# is refused here, before the program starts, exactly when the library would refuse it;
# test/streamcheck/option_grammar.py feeds one table of values to both and compares.


def _split(text):
    """The non-empty comma-separated parts, spaces (only) trimmed at both ends."""
    return [part.strip(b" ") for part in text.split(b",") if part.strip(b" ")]


def _is_module_name(text):
    """Dotted names of ASCII letters, digits, '_' and non-ASCII bytes (Python's non-ASCII letters)."""
    name_begun = False
    for byte in text:
        if byte == ord("."):
            if not name_begun:
                return False
            name_begun = False
        elif chr(byte).isascii() and (chr(byte).isalnum() or byte == ord("_")) or byte >= 0x80:
            name_begun = True
        else:
            return False
    return name_begun


def _bad(variable, value, expected):
    return f"streamcheck: {variable}='{os.fsdecode(value)}': expected {expected}"


def check_value_error(value):
    """The library's refusal of STREAMLIKE_CHECK=value (str or bytes), None where it accepts it."""
    value = os.fsencode(value)
    for item in _split(value):
        if item not in (b"wrong-stream", b"wrong-stream=strict", b"capture", b"all", b"1", b"0", b"off"):
            return _bad(
                "STREAMLIKE_CHECK",
                value,
                "a comma-separated list of wrong-stream (or wrong-stream=strict), capture, all (or off)",
            )
    return None


def checks_something(value):
    """Whether an accepted STREAMLIKE_CHECK value turns any check on."""
    return any(item not in (b"0", b"off") for item in _split(os.fsencode(value)))


def allow_value_error(value):
    """The library's refusal of STREAMLIKE_CHECK_ALLOW=value (str or bytes), None where it accepts it."""
    value = os.fsencode(value)
    for item in _split(value):
        kind, colon, text = item.partition(b":")
        if kind not in (b"lib", b"sym", b"py"):
            return _bad("STREAMLIKE_CHECK_ALLOW", value, "comma-separated lib:TEXT, sym:TEXT or py:MODULE entries")
        if not colon or not text:
            return _bad("STREAMLIKE_CHECK_ALLOW", value, "a non-empty TEXT after each lib:, sym: or py:")
        if kind == b"py" and not _is_module_name(text):
            return _bad("STREAMLIKE_CHECK_ALLOW", value, "py:MODULE to name a module, dotted (py:torch.nn), not a path")
    return None


# --- The command line -----------------------------------------------------------------------------

_VALUED = {"--check", "--allow", "--json", "--sarif", "--output", "--library"}
_FLAGS = {"--fail", "-h", "--help"}


class _Refused(Exception):
    """A command line or value the command cannot run (exit 2, one line)."""


def _find_library(given):
    """The checker library: --library, $STREAMLIKE_CHECK_LIBRARY, then beside this package."""
    candidates = [given, os.environ.get("STREAMLIKE_CHECK_LIBRARY"), os.path.join(_HERE, _LIBRARY)]
    for path in candidates:
        if path and os.path.isfile(path):
            return os.path.abspath(path)
    return None


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m streamlike.check",
        allow_abbrev=False,  # an abbreviation would end the options where _split_command_line did not
        usage="%(prog)s [options] (script.py | -m module | program) [args ...]",
        description="Run a program under streamcheck: wrong-stream launches and capture breakers, reported "
        "per call site, in every process of the program that uses CUDA (docs/streamcheck.md). The options "
        "come before the script, -m module or program; everything after it is the program's.",
        epilog="A word that is not a file but a command on PATH is run as that program, with the environment; "
        "one that is a script of this Python (pytest's console script) runs through the bootstrap, as -m does, "
        "so that a process that used CUDA without the checker is named. Exit status: the program's; with --fail, "
        "1 when the run is not clean; 2 for a command line or value refused before the program starts.",
    )
    p.add_argument(
        "--check",
        default="wrong-stream,capture",
        help="what to check: wrong-stream (or wrong-stream=strict), capture or all, comma-separated "
        "(default: wrong-stream,capture)",
    )
    p.add_argument(
        "--fail",
        action="store_true",
        help="exit with status 1 when a process reported, used CUDA unchecked, or ended without its summary",
    )
    p.add_argument("--json", metavar="FILE", help=f"write every process's reports, merged ({MERGED_SCHEMA}), to FILE")
    p.add_argument("--sarif", metavar="FILE", help="write the reports as SARIF 2.1.0 to FILE (code scanning)")
    p.add_argument(
        "--output",
        metavar="FILE",
        help="write each process's reports and summary to FILE, one section per process, instead of stderr",
    )
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="ENTRY",
        help="not reported when the call site matches: lib:TEXT (a library path), sym:TEXT (a native "
        "symbol) or py:MODULE (a Python module); repeatable",
    )
    p.add_argument("--library", metavar="PATH", help=f"the checker library ({_LIBRARY}) to inject")
    return p


def _split_command_line(argv):
    """(the command's options, the program: ('-m', MODULE, args) | ('word', WORD, args) | None)."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "-m":
            if i + 1 >= len(argv):
                raise _Refused("streamcheck: -m needs a module name (python -m streamlike.check -m pytest ...)")
            return argv[:i], ("-m", argv[i + 1], argv[i + 2 :])
        if word == "--":
            if i + 1 >= len(argv):
                break
            return argv[:i], ("word", argv[i + 1], argv[i + 2 :])
        name = word.split("=", 1)[0]
        if name in _VALUED:
            i += 1 if "=" in word else 2
        elif name in _FLAGS or (word.startswith("-") and word != "-"):
            i += 1  # argparse names an unknown option
        else:
            return argv[:i], ("word", word, argv[i + 1 :])
    return argv, None


def _is_this_python(interpreter):
    """Whether a #! interpreter is this Python of this environment (the same file, the same folder)."""
    try:
        return os.path.dirname(os.path.abspath(interpreter)) == os.path.dirname(
            os.path.abspath(sys.executable)
        ) and os.path.samefile(interpreter, sys.executable)
    except OSError:
        return False


def _python_console_script(path):
    """Whether `path` is a script of this Python (a console script such as pytest's)."""
    try:
        with open(path, "rb") as f:
            first = f.readline(4096)
    except OSError:
        return False
    if not first.startswith(b"#!"):
        return False
    words = first[2:].split()
    return bool(words) and _is_this_python(os.fsdecode(words[0]))


def _child_command(program):
    """The child's command line: Python through the bootstrap (_check_child.py), else the program."""
    child = [sys.executable, os.path.join(_HERE, "_check_child.py")]
    how, name, args = program
    if how == "-m":
        return child + ["-m", name] + args, True
    if os.path.isfile(name):
        return child + [name] + args, True
    found = shutil.which(name) if os.sep not in name else None
    if found is None:
        raise _Refused(
            f"streamcheck: no such script or program: {name} (a Python file, -m MODULE, or a command on PATH)"
        )
    if _python_console_script(found):
        return child + [found] + args, True
    return [found] + args, False


def _environment(options, library, records):
    env = dict(os.environ)
    env.update(
        {
            "STREAMLIKE_CHECK": options.check,
            "CUDA_INJECTION64_PATH": library,
            # The library looks up the Python C API itself when the driver loads it.
            "STREAMLIKE_CHECK_PYTHON_FRAMES": "1",
            "STREAMLIKE_CHECK_RECORDS": records,
        }
    )
    # The command decides the verdict from every record; the library exiting 1 on its own would
    # change the exit status of each checked subprocess the program waits for.
    env.pop("STREAMLIKE_CHECK_FAIL", None)
    if options.allow:
        env["STREAMLIKE_CHECK_ALLOW"] = ",".join(options.allow)
    if options.output:
        env["STREAMLIKE_CHECK_OUTPUT"] = os.path.join(records, "output-%p.txt")
    for variable, error in (("STREAMLIKE_CHECK", check_value_error), ("STREAMLIKE_CHECK_ALLOW", allow_value_error)):
        if variable in env and (message := error(env[variable])) is not None:
            raise _Refused(message)
    if not checks_something(options.check):
        raise _Refused(f"streamcheck: --check {options.check!r} checks nothing")
    return env


# --- After the run: the records merged, the verdict -----------------------------------------------


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, str(e)


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _argv_text(argv):
    return " ".join(argv) if argv else "?"


def merge(records, exit_status, top_pid, watched):
    """The run's verdict from the records folder: the merged document (MERGED_SCHEMA) and the list of
    problems --fail fails on."""
    processes, reports, problems, notes = [], [], [], []
    totals = {"wrong_stream": 0, "capture_breaker": 0, "allowed": 0}
    tests = {}
    names = sorted(os.listdir(records))
    for name in names:
        if name.startswith("tests-") and name.endswith(".json"):
            value, _ = _read_json(os.path.join(records, name))
            if isinstance(value, dict):
                tests[value.get("pid")] = value.get("reports", {})
    for name in names:
        if not (name.startswith("streamcheck-") and name.endswith(".json")):
            continue
        record, error = _read_json(os.path.join(records, name))
        if not isinstance(record, dict) or record.get("schema") != PROCESS_SCHEMA:
            problems.append(f"the record {name} cannot be read ({error or 'not a ' + PROCESS_SCHEMA + ' record'})")
            continue
        pid = record.get("pid")
        process = {k: record.get(k) for k in ("pid", "ppid", "argv", "checked", "why_unchecked", "summarized")}
        processes.append(process)
        for key in totals:
            totals[key] += int(record.get(key) or 0)
        who = f"process {pid} ({_argv_text(record.get('argv'))})"
        if not record.get("checked"):
            problems.append(f"{who} used CUDA unchecked: {record.get('why_unchecked') or 'no reason given'}")
        if not record.get("summarized"):
            if isinstance(pid, int) and _alive(pid):
                problems.append(f"{who} was still running when the program ended: its reports may be incomplete")
            else:
                problems.append(
                    f"{who} ended without its summary (killed by a signal, or os._exit): its reports may be incomplete"
                )
        attributed = tests.get(pid, {})
        for index, report in enumerate(record.get("reports") or []):
            merged = dict(report, pid=pid)
            if str(index) in attributed:
                merged["test"] = attributed[str(index)]
            reports.append(merged)
    reported = totals["wrong_stream"] + totals["capture_breaker"]
    if reported:
        counts = f"{totals['wrong_stream']} wrong-stream and {totals['capture_breaker']} capture-breaker"
        problems.append(f"{counts} call site(s) reported")
    if not processes:
        bootstrap, _ = _read_json(os.path.join(records, f"bootstrap-{top_pid}.json"))
        if not watched:
            problems.append(
                "no process started the checker, and the program is not Python the command runs itself, so it "
                "cannot tell whether the program used CUDA (run a Python program as script.py or -m MODULE)"
            )
        elif not isinstance(bootstrap, dict):
            problems.append(
                f"no process started the checker, and the program's process {top_pid} ended before saying whether "
                "it used CUDA (killed by a signal, or os._exit)"
            )
        else:
            notes.append(
                "no process of the program initialized CUDA (nothing to check)"
                if bootstrap.get("cuda") == "unused"
                else "the program loaded the CUDA driver but never initialized CUDA (nothing to check)"
            )
    document = {
        "schema": MERGED_SCHEMA,
        "exit_status": exit_status,
        "processes": processes,
        **totals,
        "reports": reports,
        "problems": problems,
    }
    return document, notes


def report_text(report):
    """A report of a record as the library wrote it when it was made (report.cpp's format): the record
    keeps the fields, not the text."""
    kind = report.get("kind", "?").replace("-", " ")
    lines = [
        f"streamcheck: {kind}: {report.get('api', '?')} ({report.get('call', '?')}) "
        f"on device {report.get('device', '?')}, thread {report.get('thread', '?')}: {report.get('why', '')}"
    ]
    if report.get("fix"):
        lines.append(f"  fix: {report['fix']}")
    lines.append(f"  at {report.get('python') or '(no Python frame)'}")
    lines += [f"    {frame}" for frame in report.get("frames") or []]
    return "\n".join(lines)


def _python_location(report):
    """(file, line) of the report's Python call site, None where it has none."""
    file, _, line = (report.get("python") or "").rpartition(":")
    return (file, int(line)) if file and line.isdigit() else None


def _artifact_uri(path):
    """A path relative to the working directory where it lies inside it (as code scanning wants), else a
    file: URI."""
    from pathlib import Path
    from urllib.parse import quote

    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    if not relative.startswith(os.pardir + os.sep) and relative != os.pardir:
        return quote(Path(relative).as_posix())
    return Path(absolute).as_uri()


def sarif(document):
    """The merged reports as a SARIF 2.1.0 log: one result per report."""
    results = []
    for report in document["reports"]:
        text = report.get("why") or report.get("kind", "")
        if report.get("fix"):
            text += f" Fix: {report['fix']}"
        result = {
            "ruleId": report.get("kind"),
            "level": "error",
            "message": {"text": f"{report.get('api', '?')}: {text}"},
            "properties": {
                k: report[k]
                for k in ("api", "call", "stream", "current", "device", "pid", "count", "frames", "test")
                if k in report
            },
        }
        location = _python_location(report)
        if location is not None:
            result["locations"] = [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _artifact_uri(location[0])},
                        "region": {"startLine": location[1]},
                    }
                }
            ]
        elif report.get("frames"):
            result["locations"] = [{"logicalLocations": [{"fullyQualifiedName": report["frames"][0]}]}]
        if report.get("allowed"):
            result["level"] = "note"
            result["suppressions"] = [{"kind": "external", "justification": "allowed by --allow"}]
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "streamcheck",
                        "rules": [{"id": rule, "shortDescription": {"text": text}} for rule, text in EXPLAINED.items()],
                    }
                },
                "results": results,
            }
        ],
    }


def _write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _collect_output(records, path, document):
    """Each process's text into one file: a header line per process, then what it wrote."""
    argv = {p["pid"]: p.get("argv") for p in document["processes"]}
    parts = []
    for name in sorted(os.listdir(records), key=lambda n: (len(n), n)):
        if name.startswith("output-") and name.endswith(".txt"):
            pid = name[len("output-") : -len(".txt")]
            with open(os.path.join(records, name), encoding="utf-8", errors="replace") as f:
                text = f.read()
            shown = argv.get(int(pid)) if pid.isdigit() else None
            parts.append(f"== streamcheck: process {pid} ({_argv_text(shown)}) ==\n{text}")
    _write(path, "".join(parts) if parts else "== streamcheck: no process started the checker ==\n")


def _run(child, env):
    """Runs the child to its end; Ctrl-C and SIGTERM go to the program, which decides."""
    try:
        process = subprocess.Popen(child, env=env)
    except OSError as e:
        raise _Refused(f"streamcheck: cannot run {child[0]}: {e.strerror}") from None
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, lambda *_: None)  # the terminal sends it to the child too
    signal.signal(signal.SIGTERM, lambda number, _: process.send_signal(number))
    try:
        status = process.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return process.pid, status


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _parser()
    try:
        own, program = _split_command_line(argv)
        options = parser.parse_args(own)
        if program is None:
            parser.error("name a script to run (or -m MODULE, or a program)")
        library = _find_library(options.library)
        if library is None:
            raise _Refused(
                f"streamcheck: {_LIBRARY} not found (looked at --library, $STREAMLIKE_CHECK_LIBRARY and {_HERE}); "
                "build it with the C++ library (meson: src/streamcheck) and pass --library PATH"
            )
        child, watched = _child_command(program)
        with tempfile.TemporaryDirectory(prefix="streamcheck-") as records:
            env = _environment(options, library, records)
            pid, status = _run(child, env)
            exit_status = status if status >= 0 else 128 - status  # a signal: as a shell says it
            document, notes = merge(records, exit_status, pid, watched)
            if options.output:
                _collect_output(records, options.output, document)
    except _Refused as e:
        print(e, file=sys.stderr)
        return 2
    if options.json:
        _write(options.json, json.dumps(document, indent=1) + "\n")
    if options.sarif:
        _write(options.sarif, json.dumps(sarif(document), indent=1) + "\n")
    checked = sum(1 for p in document["processes"] if p["checked"])
    print(
        f"streamcheck: {checked} checked process(es); {document['wrong_stream']} wrong-stream and "
        f"{document['capture_breaker']} capture-breaker call site(s) reported, {document['allowed']} allowed",
        file=sys.stderr,
    )
    for note in notes:
        print(f"streamcheck: {note}", file=sys.stderr)
    for problem in document["problems"]:
        print(f"streamcheck: {'FAIL: ' if options.fail else ''}{problem}", file=sys.stderr)
    if options.fail and document["problems"]:
        return 1
    return exit_status


if __name__ == "__main__":
    sys.exit(main())
