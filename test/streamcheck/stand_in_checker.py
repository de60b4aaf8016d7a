"""What the checker library writes into STREAMLIKE_CHECK_RECORDS, written from Python, for the CPU
tests of python -m streamlike.check and pytest --streamcheck: no CUPTI callback comes without a GPU,
so a test program calls this where the library would report (docs/streamcheck.md, "The records").

The record (streamlike.check.process/1) is written when the stand-in starts (the library: when the
driver loads it), rewritten whole and atomically at each new report, and at exit with
"summarized": true; a process that ends through os._exit leaves it unsummarized, as with the library.
"""

import atexit
import json
import os
import sys

_record = None


def _path():
    return os.path.join(os.environ["STREAMLIKE_CHECK_RECORDS"], f"streamcheck-{os.getpid()}.json")


def _write():
    temporary = _path() + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        json.dump(_record, f)
    os.replace(temporary, _path())


def _say(text):
    """The report text, where the library writes it: STREAMLIKE_CHECK_OUTPUT (%p: the pid), else stderr."""
    output = os.environ.get("STREAMLIKE_CHECK_OUTPUT")
    if output:
        with open(output.replace("%p", str(os.getpid())), "a", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stderr.write(text)


def _summarize():
    _record["summarized"] = True
    _write()
    counts = f"{_record['wrong_stream']} wrong-stream and {_record['capture_breaker']} capture-breaker"
    _say(f"streamcheck: {counts} call sites reported\n")


def start(checked=True, why_unchecked=None):
    """The checker starting in this process (once)."""
    global _record
    if _record is not None or not os.environ.get("STREAMLIKE_CHECK_RECORDS"):
        return  # started, or not under the checker
    _record = {
        "schema": "streamlike.check.process/1",
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "argv": list(sys.argv),
        "checked": checked,
        "why_unchecked": why_unchecked,
        "summarized": False,
        "wrong_stream": 0,
        "capture_breaker": 0,
        "allowed": 0,
        "reports": [],
    }
    _write()
    _say("streamcheck: checking wrong-stream and capture (a stand-in)\n")
    atexit.register(_summarize)


def report(kind="wrong-stream", api="cuLaunchKernel", allowed=False, depth=1):
    """A report at the caller's line (depth frames up), as the library makes one."""
    start()
    if _record is None:
        return
    frame = sys._getframe(depth)
    wrong = kind == "wrong-stream"
    _record["reports"].append(
        {
            "kind": kind,
            "api": api,
            "call": "launch",
            "stream": "0x1" if wrong else "0x0",
            "current": "0x5000" if wrong else "0x0",
            "device": 0,
            "thread": os.getpid(),
            "count": 1,
            "allowed": allowed,
            "python": f"{frame.f_code.co_filename}:{frame.f_lineno}",
            "why": "given stream 0x1 (the legacy default stream), but the calling thread's current stream on device 0 "
            "is 0x5000, and nothing orders this call after the 1 call(s) queued there"
            if wrong
            else "a synchronization of a capturing stream would invalidate the capture",
            "frames": ["/stand/in/libkernels.so: launch_it+0x10"],
            "fix": "pass the current stream (torch.cuda.current_stream()) to the launch",
        }
    )
    key = "allowed" if allowed else kind.replace("-", "_")
    _record[key] += 1
    _write()
    if not allowed:
        _say(f"streamcheck: {kind.replace('-', ' ')}: {api} at {_record['reports'][-1]['python']}\n")


def launch(stream, current):
    """A launch on `stream` while `current` is current: a wrong-stream report where they differ."""
    if stream != current:
        report(depth=2)
    else:
        start()
