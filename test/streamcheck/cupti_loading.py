"""libstreamlike_check.so's CUPTI layer on a CPU, against a fake libcupti (fake_cupti.cpp) and the
fake CUDA driver: where CUPTI is found ($CUDA_HOME, the nvidia-cuda-cupti wheel's folder beside the
package) and the one message naming every place looked at when it is not; subscribing beside other
subscribers, and falling back; who holds CUPTI when it is taken; the per-process records
(STREAMLIKE_CHECK_RECORDS); a capture begun by cuStreamBeginRecaptureToGraph, found by its callback
name, and the breaker inside it with its fix; and LD_PRELOAD into a program that never uses CUDA,
which loads and prints nothing.

usage: cupti_loading.py CHECKER FAKE_CUPTI FAKE_CUDA CLIENT SCHEMA"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import json_schema

checker, fake_cupti, fake_cuda, client, schema_path = (os.path.abspath(p) for p in sys.argv[1:6])
with open(schema_path, encoding="utf-8") as f:
    schema = json.load(f)
failures = []

RECORD_KEYS = [
    "schema",
    "pid",
    "ppid",
    "argv",
    "checked",
    "why_unchecked",
    "summarized",
    "wrong_stream",
    "capture_breaker",
    "allowed",
    "reports",
]


def expect(condition, what, result=None):
    if not condition:
        failures.append(
            what + ("" if result is None else f"\n  stdout: {result.stdout!r}\n  stderr: {result.stderr!r}")
        )


def link(target, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


def lines_of(result):
    return dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)


def can_hide_toolkit():
    r = subprocess.run(["unshare", "-m", "true"], capture_output=True) if shutil.which("unshare") else None
    return r is not None and r.returncode == 0


tmp = tempfile.mkdtemp()
driver = os.path.join(tmp, "driver")
link(fake_cuda, os.path.join(driver, "libcuda.so.1"))
home = os.path.join(tmp, "home")
home_cupti = os.path.join(home, "lib64", "libcupti.so.13")
link(fake_cupti, home_cupti)
empty = os.path.join(tmp, "empty")
os.makedirs(empty)


def run(cupti_path, extra, checker_path=checker, hide_toolkit=False, snapshots=None):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("STREAMLIKE_CHECK", "FAKE_CUPTI"))
        and k not in ("CUDA_HOME", "CUDA_PATH", "CUDA_INJECTION64_PATH", "LD_PRELOAD")
    }
    env["LD_LIBRARY_PATH"] = driver
    env.update(extra)
    command = [client, checker_path, cupti_path] + ([snapshots] if snapshots else [])
    if hide_toolkit:
        # The toolkit of this machine out of sight: an empty folder mounted over it, in a namespace
        # of this command alone.
        command = ["unshare", "-m", "sh", "-c", 'mount --bind "$0" /usr/local/cuda && exec "$@"', empty] + command
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)


def one_record(folder, result):
    names = os.listdir(folder)
    expect(len(names) == 1 and names[0].startswith("streamcheck-"), f"one record, no temporary left: {names}", result)
    if len(names) != 1:
        return {}
    with open(os.path.join(folder, names[0]), encoding="utf-8") as f:
        record = json.load(f)
    expect(names[0] == f"streamcheck-{record.get('pid')}.json", "the record is named by its process id", result)
    expect(list(record) == RECORD_KEYS, f"the record's fields, in order: {list(record)}", result)
    expect(record.get("schema") == "streamlike.check.process/1", "the record's schema", result)
    expect(record.get("ppid") == os.getpid(), "the record's parent process", result)
    wrong = json_schema.errors(record, schema["$defs"]["process"], schema)
    expect(not wrong, "the record follows the schema's $defs/process: " + "; ".join(wrong), result)
    return record


# --- Found through $CUDA_HOME; subscribed beside other subscribers; a recapture's breaker ---------
records = os.path.join(tmp, "records")
snapshots = os.path.join(tmp, "snapshots")
os.makedirs(records)
os.makedirs(snapshots)
summary = os.path.join(tmp, "summary.json")
r = run(
    home_cupti,
    {
        "CUDA_HOME": home,
        "STREAMLIKE_CHECK": "capture",
        "STREAMLIKE_CHECK_RECORDS": records,
        "STREAMLIKE_CHECK_JSON": summary,
    },
    snapshots=snapshots,
)
seen = lines_of(r)
expect(r.returncode == 0 and seen.get("active") == "1", "the checker starts with the fake CUPTI of $CUDA_HOME", r)
expect(seen.get("cupti-loaded") == "1", "the libcupti of $CUDA_HOME/lib64 is the one loaded", r)
expect(
    seen.get("subscription") == "cuptiSubscribe_v2 size 40 allowMultipleSubscribers 1 name streamlike.check",
    "subscribed with cuptiSubscribe_v2, the 13.4 struct, allowMultipleSubscribers = 1",
    r,
)
expect(f"({home_cupti}, beside other CUPTI subscribers)" in r.stderr, "the start line names the CUPTI and how", r)
expect(seen.get("enabled-recapture") == "1", "cuStreamBeginRecaptureToGraph's callback enabled by its name", r)
expect(seen.get("enabled-newer") == "0", "a newer callback the checker does not know stays off", r)
expect(seen.get("enabled-sync") == "1", "cuStreamSynchronize's callback enabled", r)
expect(seen.get("verdict-before-capture") == "0", "a sync before any capture is fine", r)
expect(seen.get("verdict-in-recapture") == "1", "a sync of the recapturing stream is a capture breaker", r)
expect(seen.get("verdict-repeat") == "2", "the same site again is a repeat", r)
expect(seen.get("verdict-after-capture") == "0", "the recapture ended with cuStreamEndCapture", r)
switched = seen.get("paused-switched", "-1")
expect(int(switched) > 0, "a pause switches the checked calls off", r)
expect(seen.get("idle-switched") == switched, "idle subscribes every call a pause switched off", r)
expect(seen.get("resumed-switched") == switched, "a resume subscribes them again", r)
for state, sync in (("paused", "0"), ("idle", "1"), ("resumed", "1")):
    expect(seen.get(f"{state}-enabled-sync") == sync, f"{state}: cuStreamSynchronize's callback enabled {sync}", r)
    expect(seen.get(f"{state}-enabled-recapture") == "1", f"{state}: a capture's callback stays enabled", r)
# Paused, the sync's callback never comes; idle, it comes and nothing judges it: no verdict either way.
expect(seen.get("paused-verdict") == "-1", "paused, a sync is not judged", r)
expect(seen.get("idle-verdict") == "-1", "idle, a sync is not judged", r)
expect(seen.get("resumed-verdict") == "0", "resumed, a sync is judged again", r)
expect(seen.get("state-3") == "-1" and seen.get("state-minus-1") == "-1", "a state other than 0, 1, 2 is refused", r)
expect(
    "streamcheck: capture breaker: cuStreamSynchronize (stream synchronization)" in r.stderr
    and "\n  fix: move it out of the capture (after cudaStreamEndCapture)" in r.stderr,
    "the breaker's report and its fix line",
    r,
)
record = one_record(records, r)
expect(
    record.get("checked") is True and record.get("why_unchecked") is None and record.get("summarized") is True,
    "the last record: checked, summarized at exit",
    r,
)
expect(record.get("argv") == [client, checker, home_cupti, snapshots], f"argv: {record.get('argv')}", r)
expect(
    (record.get("wrong_stream"), record.get("capture_breaker"), record.get("allowed")) == (0, 1, 0),
    "the record's counts",
    r,
)
reports = record.get("reports", [])
expect(
    len(reports) == 1
    and reports[0]["api"] == "cuStreamSynchronize"
    and reports[0]["count"] == 2
    and reports[0]["fix"].startswith("move it out of the capture"),
    f"the record's report, with its fix: {reports}",
    r,
)
with open(os.path.join(snapshots, "at-start.json"), encoding="utf-8") as f:
    at_start = json.load(f)
expect(
    at_start.get("checked") is True and at_start.get("summarized") is False and at_start.get("reports") == [],
    f"a record as soon as the checker started: {at_start}",
    r,
)
with open(os.path.join(snapshots, "at-report.json"), encoding="utf-8") as f:
    at_report = f.read()
expect(
    json.loads(at_report).get("summarized") is False and json.loads(at_report).get("capture_breaker") == 1,
    f"the record rewritten at the new report: {at_report}",
    r,
)
with open(os.path.join(snapshots, "at-repeat.json"), encoding="utf-8") as f:
    expect(f.read() == at_report, "a repeat writes no record", r)
with open(summary, encoding="utf-8") as f:
    summarized = json.load(f)
expect(
    summarized.get("capture_breaker") == 1 and summarized["reports"][0]["fix"].startswith("move it out"),
    "STREAMLIKE_CHECK_JSON still written, with the fix",
    r,
)

# --- Older CUPTIs: the 13.0 struct, then cuptiSubscribe --------------------------------------------
for mode, what in [
    ("13.0", "CUPTI 13.0, which would ignore the field: the 13.0 struct"),
    ("refuses-field", "a CUPTI refusing the 13.2 struct: asked again with the 13.0 struct"),
]:
    r = run(home_cupti, {"CUDA_HOME": home, "STREAMLIKE_CHECK": "capture", "FAKE_CUPTI": mode})
    expect(
        lines_of(r).get("subscription") == "cuptiSubscribe_v2 size 32 allowMultipleSubscribers 0 name streamlike.check"
        and "as the only CUPTI subscriber" in r.stderr,
        what,
        r,
    )
r = run(home_cupti, {"CUDA_HOME": home, "STREAMLIKE_CHECK": "capture", "FAKE_CUPTI": "v1"})
expect(
    lines_of(r).get("subscription") == "cuptiSubscribe", "cuptiSubscribe_v2 refusing every struct: cuptiSubscribe", r
)

# --- CUPTI held by another subscriber: named -------------------------------------------------------
for mode, extra, holder in [
    ("busy", {}, "CUPTI is held by CUPTI for nsys"),
    (
        "busy-unnamed",
        {"CUDA_INJECTION64_PATH": "/opt/nsight/libToolsInjection64.so"},
        "CUPTI is held by the CUDA_INJECTION64_PATH library /opt/nsight/libToolsInjection64.so",
    ),
    ("busy-unnamed", {}, "CUPTI is held by another CUPTI subscriber"),
]:
    busy_records = tempfile.mkdtemp(dir=tmp)
    r = run(
        home_cupti,
        {"CUDA_HOME": home, "STREAMLIKE_CHECK": "all", "FAKE_CUPTI": mode, "STREAMLIKE_CHECK_RECORDS": busy_records}
        | extra,
    )
    said = [line for line in r.stderr.splitlines() if line.startswith("streamcheck:")]
    expect(
        lines_of(r).get("active") == "0" and len(said) == 1 and holder in said[0] and "runs unchecked" in said[0],
        f"{mode} {extra}: one line naming who holds CUPTI ({holder})",
        r,
    )
    record = one_record(busy_records, r)
    expect(
        record.get("checked") is False and holder in (record.get("why_unchecked") or "") and record.get("summarized"),
        f"{mode}: the record says why the process went unchecked: {record}",
        r,
    )

# --- A value the checker cannot read: said, and recorded ------------------------------------------
bad_records = tempfile.mkdtemp(dir=tmp)
r = run(home_cupti, {"CUDA_HOME": home, "STREAMLIKE_CHECK": "sideways", "STREAMLIKE_CHECK_RECORDS": bad_records})
record = one_record(bad_records, r)
expect(
    lines_of(r).get("active") == "0"
    and "STREAMLIKE_CHECK='sideways'" in r.stderr
    and record.get("checked") is False
    and "STREAMLIKE_CHECK='sideways'" in (record.get("why_unchecked") or "")
    and record.get("summarized") is True,
    f"a bad STREAMLIKE_CHECK: named on stderr and in the record: {record}",
    r,
)

# --- The wheel's layout, and nothing found ---------------------------------------------------------
if can_hide_toolkit():
    # pip's layouts beside the package folder: nvidia-cuda-cupti's nvidia/cu13/lib (13.x), and
    # nvidia-cuda-cupti-cu12's nvidia/cuda_cupti/lib, what a streamlike-cu12 wheel's checker finds.
    for folder, soname, which in (
        ("cu13", "libcupti.so.13", "nvidia-cuda-cupti's"),
        ("cuda_cupti", "libcupti.so.12", "nvidia-cuda-cupti-cu12's"),
    ):
        site = os.path.join(tmp, "site-" + folder)
        os.makedirs(os.path.join(site, "streamlike"))
        shutil.copy(checker, os.path.join(site, "streamlike", "libstreamlike_check.so"))
        link(fake_cupti, os.path.join(site, "nvidia", folder, "lib", soname))
        wheel_cupti = os.path.join(site, "streamlike", "..", "nvidia", folder, "lib", soname)
        r = run(
            wheel_cupti,
            {"STREAMLIKE_CHECK": "capture"},
            checker_path=os.path.join(site, "streamlike", "libstreamlike_check.so"),
            hide_toolkit=True,
        )
        expect(
            lines_of(r).get("active") == "1" and lines_of(r).get("cupti-loaded") == "1" and wheel_cupti in r.stderr,
            f"pip's layout: {which} nvidia/{folder}/lib found beside the package folder",
            r,
        )

    unfound_records = tempfile.mkdtemp(dir=tmp)
    nothing = os.path.join(tmp, "nothing")
    r = run(
        fake_cupti,
        {"STREAMLIKE_CHECK": "all", "CUDA_HOME": nothing, "STREAMLIKE_CHECK_RECORDS": unfound_records},
        hide_toolkit=True,
    )
    said = [line for line in r.stderr.splitlines() if line.startswith("streamcheck:")]
    places = [
        "the libcupti already loaded (libcupti.so.13, .12, libcupti.so)",
        f"{nothing}/lib64",
        f"{nothing}/extras/CUPTI/lib64",
        "$CUDA_PATH (unset)",
        "/usr/local/cuda/lib64",
        "/usr/local/cuda/extras/CUPTI/lib64",
        os.path.dirname(checker) + "/../nvidia/cu13/lib",
        os.path.dirname(checker) + "/../nvidia/cuda_cupti/lib",
        "the loader's search path",
        "pip install nvidia-cuda-cupti",
    ]
    expect(
        lines_of(r).get("active") == "0" and lines_of(r).get("cupti-loaded") == "0" and len(said) == 1,
        "no CUPTI anywhere: one message, the checker off, no libcupti loaded",
        r,
    )
    for place in places:
        expect(bool(said) and place in said[0], f"the message names {place!r}", r)
    record = one_record(unfound_records, r)
    expect(
        record.get("checked") is False and "CUPTI (libcupti) not found" in (record.get("why_unchecked") or ""),
        f"the record says CUPTI was not found: {record}",
        r,
    )
else:
    print("cupti_loading: no mount namespace here (unshare -m): the wheel-layout and not-found cases did not run")

# --- LD_PRELOAD into a program that never uses CUDA ------------------------------------------------
quiet_records = tempfile.mkdtemp(dir=tmp)
base = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIKE_CHECK") and k != "CUDA_INJECTION64_PATH"}
preloaded = base | {"LD_PRELOAD": checker, "STREAMLIKE_CHECK": "all", "STREAMLIKE_CHECK_RECORDS": quiet_records}
r = subprocess.run(["/bin/true"], env=preloaded, capture_output=True, text=True)
expect(r.returncode == 0 and r.stderr == "" and r.stdout == "", "LD_PRELOAD, no CUDA: prints nothing", r)
r = subprocess.run(["/bin/true"], env=preloaded | {"LD_DEBUG": "libs"}, capture_output=True, text=True)
loaded = [line for line in r.stderr.splitlines() if "find library=" in line]
expect(
    loaded and not any(name in line for line in loaded for name in ("libcupti", "libcuda", "libcudart")),
    f"LD_PRELOAD, no CUDA: neither libcupti, the driver nor the CUDA runtime is loaded: {loaded}",
    r,
)
expect(os.listdir(quiet_records) == [], "LD_PRELOAD, no CUDA: no record (the checker never started)")
r = subprocess.run(["sh", "-c", 'printf %s "$CUDA_INJECTION64_PATH"'], env=preloaded, capture_output=True, text=True)
expect(r.stdout == os.path.realpath(checker), "LD_PRELOAD points the driver's CUDA_INJECTION64_PATH at the checker", r)
r = subprocess.run(
    ["sh", "-c", 'printf %s "$CUDA_INJECTION64_PATH"'],
    env=base | {"LD_PRELOAD": checker},
    capture_output=True,
    text=True,
)
expect(r.stdout == "" and r.stderr == "", "LD_PRELOAD with the checker off: nothing set, nothing said", r)
if shutil.which("readelf"):
    r = subprocess.run(["readelf", "-d", checker], capture_output=True, text=True)
    needed = [line for line in r.stdout.splitlines() if "(NEEDED)" in line]
    expect(
        needed and not any("libcupti" in line or "libcudart" in line or "libcuda." in line for line in needed),
        f"the checker needs no libcupti and no CUDA runtime: {needed}",
        r,
    )

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("cupti_loading: all checks passed")
