"""The checker beside torch's profiler, in one program under `python -m streamlike.check --fail`: a
small torch workload runs inside `torch.profiler.profile(activities=[CPU, CUDA])`, with one planted
wrong stream (a kernel launched through the driver on the legacy default stream while a torch side
stream is current, as an extension that ignores torch's stream does). Two cases, each one CUPTI for
the whole process: torch's libraries need libcupti.so.13 (kineto's, loaded at `import torch`),
which the CUPTI under test, preloaded (LD_PRELOAD), is meant to satisfy, and STREAMLIKE_CHECK_CUPTI
names the same file for the checker (docs/streamcheck.md, "Beside torch's profiler").

- shared: the nvidia-cuda-cupti wheel's CUPTI (13.2 or newer) for the checker, its start line
  saying "beside other CUPTI subscribers", and the checker reported the planted launch at its line.
  The profiler's trace holds CUDA kernel events, or the profiler was refused and said so, naming
  CUPTI's refusal: torch 2.11's kineto opens its own CUPTI (13.0.1, the nvidia-cuda-cupti torch
  depends on) by its path beside the preloaded one, subscribes through it with the one-subscriber
  API, and is refused (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) on the H200.
- alone: the toolkit's CUPTI, older than 13.2 (13.0 in /usr/local/cuda), which allows one
  subscriber: whoever subscribes second is refused. Either the checker is refused, names kineto or
  torch as the holder, and --fail exits non-zero; or the profiler is the one refused (its trace
  holds no kernel event, and kineto named CUPTI's refusal) and the checker still reported the
  planted launch; or, where kineto takes no callback subscription (kineto since August 2026 traces
  through the activity API alone), nothing is refused and both work. Never a silent pass.
  A toolkit CUPTI of 13.2 or newer, or none, leaves this case out (said).

The checker subscribes when CUDA starts, which the program makes happen before the profiler starts,
so kineto is the second subscriber in both cases. Each case prints which CUPTI each side used: the
checker's (its start line), and kineto's (the libcupti files mapped in the process, its version).

usage: profiler_beside.py CHECK_PY LIBRARY WHEELHOUSE
environment:
  STREAMLIKE_CUPTI_WHEEL     the nvidia-cuda-cupti wheel (or its libcupti.so.13) to use, instead of
                             the newest WHEELHOUSE/nvidia_cuda_cupti-*.whl
  STREAMLIKE_PACKAGE_SITE    a folder put first on the program's PYTHONPATH (where torch is, as
                             pip install --target leaves it)
  STREAMLIKE_PACKAGE_PYTHON  with it, the interpreter whose environment that is (default: this one)
  STREAMLIKE_REQUIRE_GPU=1   no device or no torch is a failure, not a skip
Exits 77 without a device, torch or the wheel. Run by itself with `--child CASE` (under the
command), it is the program: it writes what it saw to $PROFILER_BESIDE_FACTS."""

import ctypes
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

SKIP = 77
N = 1 << 16
HERE = os.path.abspath(__file__)
FIRST_MULTI_SUBSCRIBER_CUPTI = 130200  # cuptiGetVersion's 13.2
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "corpus"))
from gpu_frameworks import ADD_ONE_PTX  # noqa: E402  (the corpus's kernel: adds 1 to each word)


def mapped_cupti():
    """The libcupti files mapped in this process, each once, in the order the maps list them."""
    found = []
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            path = line.split(None, 5)[-1].strip() if line.count(" ") >= 5 else ""
            if re.search(r"/libcupti\.so[.\d]*$", path) and path not in found:
                found.append(path)
    return found


def cupti_version(path):
    """cuptiGetVersion of the libcupti at `path` (already loaded: dlopen returns that copy), 0 if none."""
    version = ctypes.c_uint32(0)
    try:
        if ctypes.CDLL(path).cuptiGetVersion(ctypes.byref(version)) != 0:
            return 0
    except OSError:
        return 0
    return version.value


def driver_version(cuda):
    version = ctypes.c_int(0)
    return version.value if cuda.cuDriverGetVersion(ctypes.byref(version)) == 0 else 0


def launch_on_legacy_stream(cuda, function, z):
    """The planted bug: the kernel on stream 0, the legacy default stream, whatever is current."""
    data, n = ctypes.c_uint64(z.data_ptr()), ctypes.c_uint(z.numel())
    params = (ctypes.c_void_p * 2)(ctypes.addressof(data), ctypes.addressof(n))
    blocks = (z.numel() + 255) // 256
    return cuda.cuLaunchKernel(function, blocks, 1, 1, 256, 1, 1, 0, None, params, None)  # the bug


def child(case):
    """The program: the workload under the profiler, its facts written to $PROFILER_BESIDE_FACTS."""
    import torch

    facts = {"case": case, "torch": torch.__version__, "cupti_after_import": mapped_cupti()}
    if not torch.cuda.is_available():
        print("profiler_beside.py: no CUDA device; skipped")
        sys.exit(SKIP)
    cuda = ctypes.CDLL("libcuda.so.1")
    p = ctypes.c_void_p
    cuda.cuModuleLoadData.argtypes = [ctypes.POINTER(p), ctypes.c_char_p]
    cuda.cuModuleGetFunction.argtypes = [ctypes.POINTER(p), p, ctypes.c_char_p]
    cuda.cuCtxGetCurrent.argtypes = [ctypes.POINTER(p)]
    u = ctypes.c_uint
    cuda.cuLaunchKernel.argtypes = [p, u, u, u, u, u, u, u, p, ctypes.POINTER(p), ctypes.POINTER(p)]
    # CUDA starts here, and the checker with it: it subscribes before the profiler does.
    x = torch.ones(N, device="cuda")
    z = torch.zeros(N, dtype=torch.int32, device="cuda")
    context, module, function = p(), p(), p()
    assert cuda.cuCtxGetCurrent(ctypes.byref(context)) == 0 and context.value, "torch left no context current"
    assert cuda.cuModuleLoadData(ctypes.byref(module), ADD_ONE_PTX) == 0, "cuModuleLoadData failed"
    assert cuda.cuModuleGetFunction(ctypes.byref(function), module, b"add_one") == 0, "cuModuleGetFunction failed"
    torch.cuda.synchronize()
    model = torch.nn.Linear(256, 256).cuda()
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    done = {}

    def workload():
        loss = model(torch.randn(64, 256, device="cuda")).square().mean()
        loss.backward()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            y = x * 2
            done["launched"] = launch_on_legacy_stream(cuda, function, z)
        torch.cuda.synchronize()
        done["side_result"] = float(y.sum())

    prof = None
    try:
        with torch.profiler.profile(activities=activities) as prof:
            workload()
    except Exception as e:  # a profiler that cannot start or stop is its job undone, said
        facts["profiler_error"] = f"{type(e).__name__}: {e}"
        prof = None
    if not done:
        workload()  # the checker's part runs even where the profiler could not start
    facts.update(done)
    facts["planted_kernel_ran"] = bool((z == 1).all())
    kernels = []
    if prof is not None:
        with tempfile.TemporaryDirectory() as folder:
            trace_path = os.path.join(folder, "trace.json")
            prof.export_chrome_trace(trace_path)
            with open(trace_path, encoding="utf-8") as f:
                trace = json.load(f)
        kernels = [e.get("name", "") for e in trace.get("traceEvents", []) if e.get("cat") == "kernel"]

        def device_time(e):
            return getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0) or 0

        facts["device_time_us"] = float(sum(device_time(e) for e in prof.key_averages()))
    facts["kernel_events"] = len(kernels)
    facts["kernel_names"] = sorted(set(kernels))[:8]
    facts["planted_kernel_in_trace"] = "add_one" in kernels
    facts["cupti_mapped"] = mapped_cupti()
    facts["cupti_versions"] = {path: cupti_version(path) for path in facts["cupti_mapped"]}
    facts["driver"] = driver_version(cuda)
    with open(os.environ["PROFILER_BESIDE_FACTS"], "w", encoding="utf-8") as f:
        json.dump(facts, f, indent=1)


# --- The test: each case run under the command, then judged -------------------------------------


def skip(why):
    if os.environ.get("STREAMLIKE_REQUIRE_GPU") == "1":
        print(f"profiler_beside.py: FAIL: {why}, and STREAMLIKE_REQUIRE_GPU=1 asks for it")
        sys.exit(1)
    print(f"profiler_beside.py: {why}; skipped")
    sys.exit(SKIP)


def environment():
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("STREAMLIKE_CHECK", "KINETO_")) and k not in ("CUDA_INJECTION64_PATH", "LD_PRELOAD")
    }
    site = os.environ.get("STREAMLIKE_PACKAGE_SITE")
    if site:
        env["PYTHONPATH"] = os.pathsep.join([site] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def probe(python, env):
    """Why the program cannot run here (no torch, no device), and the libcupti files `import torch`
    maps by itself; asked of a child, so that this process stays CUDA-free."""
    code = (
        "import ctypes, json, re, sys\n"
        "try:\n    import torch\nexcept ImportError as e:\n    sys.exit(f'torch is not importable ({e})')\n"
        "maps = [l.split(None, 5)[-1].strip() for l in open('/proc/self/maps') if l.count(' ') >= 5]\n"
        "cupti = sorted({m for m in maps if re.search(r'/libcupti\\.so[.\\d]*$', m)})\n"
        "try:\n    cuda = ctypes.CDLL('libcuda.so.1')\nexcept OSError as e:\n    sys.exit(f'no CUDA driver ({e})')\n"
        "n = ctypes.c_int(0)\n"
        "if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(n)) != 0 or n.value == 0:\n"
        "    sys.exit('no CUDA device')\n"
        "print(json.dumps({'torch': torch.__version__, 'cupti': cupti}))\n"
    )
    r = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"the probe exited {r.returncode}", None
    return None, json.loads(r.stdout.strip().splitlines()[-1])


def wheel_cupti(wheelhouse, folder):
    """The nvidia-cuda-cupti wheel's libcupti.so.13, extracted into `folder`; None without one."""
    given = os.environ.get("STREAMLIKE_CUPTI_WHEEL")
    if given and not given.endswith(".whl"):
        return os.path.realpath(given) if os.path.isfile(given) else None
    wheels = [given] if given else glob.glob(os.path.join(wheelhouse, "nvidia_cuda_cupti-*.whl"))

    def version(path):
        return [int(part) for part in re.findall(r"\d+", os.path.basename(path).split("-")[1])]

    for wheel in sorted((w for w in wheels if os.path.isfile(w)), key=version, reverse=True):
        with zipfile.ZipFile(wheel) as z:
            if "nvidia/cu13/lib/libcupti.so.13" in z.namelist():
                return os.path.realpath(z.extract("nvidia/cu13/lib/libcupti.so.13", folder))
    return None


def toolkit_cupti():
    """The toolkit's libcupti.so.13 the checker's search would find: $CUDA_HOME, $CUDA_PATH, then
    /usr/local/cuda, each one's lib64/ and extras/CUPTI/lib64/; None without one."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    for root in filter(None, roots):
        for sub in ("lib64", "extras/CUPTI/lib64"):
            path = os.path.join(root, sub, "libcupti.so.13")
            if os.path.isfile(path):
                return os.path.realpath(path)
    return None


def bug_line():
    with open(HERE, encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1) if line.rstrip().endswith("# the bug"))


def run_case(case, cupti, python, check_py, library, env, folder):
    """The program under the command with `cupti` for the whole process: (result, merged JSON, facts,
    the checker's start line: (path, how) or None)."""
    facts_path, merged_path = os.path.join(folder, f"{case}-facts.json"), os.path.join(folder, f"{case}.json")
    run_env = dict(
        env,
        LD_PRELOAD=cupti,  # the libcupti.so.13 torch's libraries need, before they load theirs
        STREAMLIKE_CHECK_CUPTI=cupti,  # the same file for the checker: one CUPTI in the process
        KINETO_LOG_LEVEL="2",  # kineto's warnings (a CUPTI it could not subscribe to) on stderr
        PROFILER_BESIDE_FACTS=facts_path,
    )
    command = [python, check_py, "--fail", "--json", merged_path, "--library", library, HERE, "--child", case]
    r = subprocess.run(command, env=run_env, capture_output=True, text=True, timeout=280)
    merged, facts = ({}, {})
    for path, into in ((merged_path, merged), (facts_path, facts)):
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                into.update(json.load(f))
    start = re.search(r"^streamcheck: checking .* CUDA driver calls \((.*), ([^,()]*)\)$", r.stderr, re.M)
    return r, merged, facts, (start.group(1), start.group(2)) if start else None


def said(r):
    return f"--- exit {r.returncode}\n--- stdout:\n{r.stdout.strip()}\n--- stderr:\n{r.stderr.strip()}"


def kineto_lines(r):
    """What kineto and torch said about CUPTI (their refusal, if any), for the verdict's line."""
    lines = [line.strip() for line in r.stderr.splitlines() if "CUPTI" in line and "streamcheck" not in line]
    return "; ".join(lines[:3]) or "nothing about CUPTI"


def planted_report(merged):
    where = f"{HERE}:{bug_line()}"
    return [
        x
        for x in merged.get("reports", [])
        if x.get("kind") == "wrong-stream"
        and x.get("api", "").startswith("cuLaunchKernel")
        and x.get("python") == where
    ]


def sides(facts, start, torch_maps_cupti):
    """Which CUPTI each side used, in words."""
    checker = f"{start[0]} ({start[1]})" if start else "none (the checker did not start)"
    mapped = facts.get("cupti_mapped", [])
    versions = facts.get("cupti_versions", {})
    if torch_maps_cupti:
        kineto = ", ".join(f"{m} (CUPTI {versions.get(m, 0)})" for m in mapped) or "none mapped"
        kineto += " (the libcupti.so.13 torch's libraries need: the preloaded one)"
    else:
        kineto = "inside torch's libraries (import torch maps no libcupti); mapped: " + (", ".join(mapped) or "none")
    return f"checker: {checker}; torch's kineto: {kineto}"


def judge_shared(r, merged, facts, start, cupti, torch_maps_cupti, failures):
    version = facts.get("cupti_versions", {}).get(cupti, 0)
    if not facts:
        failures.append(f"shared: the program wrote no facts\n{said(r)}")
        return
    print(f"shared: CUPTI {version} from {cupti}; {sides(facts, start, torch_maps_cupti)}")
    if start is None and version and facts.get("driver") and facts["driver"] < version // 10:
        skip(f"CUPTI {version} is newer than the driver (CUDA {facts['driver']}) and the checker could not start")
    if version and version < FIRST_MULTI_SUBSCRIBER_CUPTI:
        failures.append(f"shared: the wheel's CUPTI is {version}, older than 13.2: it cannot share")
        return
    if start is None or start[0] != cupti or start[1] != "beside other CUPTI subscribers":
        failures.append(f"shared: no start line naming {cupti}, beside other CUPTI subscribers\n{said(r)}")
    if torch_maps_cupti and facts.get("cupti_mapped") != [cupti]:
        # torch's kineto opens its own libcupti by its path, whatever is preloaded: then it subscribes
        # through a CUPTI of its own, which may not share.
        print(f"shared: more than one CUPTI in the process: {facts.get('cupti_mapped')}")
    if facts.get("kernel_events"):
        print(
            f"shared: the profiler saw {facts['kernel_events']} kernel events ({', '.join(facts['kernel_names'])}), "
            f"device time {facts['device_time_us']:.1f} us, the planted kernel among them: "
            f"{facts['planted_kernel_in_trace']}"
        )
    else:
        refused_by_name(r, facts, "shared", failures)
    judge_report(r, merged, facts, "shared", failures)


def refused_by_name(r, facts, case, failures):
    """A profiler with no kernel event in its trace must have said why, naming CUPTI's refusal."""
    refusal = facts.get("profiler_error") or kineto_lines(r)
    if "CUPTI_ERROR_" not in refusal and "CUPTI initialization failed" not in refusal:
        failures.append(f"{case}: the profiler's trace holds no CUDA kernel event, and nothing said why\n{said(r)}")
    else:
        print(f"{case}: the profiler was the one refused, by name (no kernel event in its trace): {refusal}")


def judge_report(r, merged, facts, case, failures):
    """The checker's part: the planted launch reported at its line, every process checked, --fail's 1."""
    found = planted_report(merged)
    if not found:
        failures.append(f"{case}: no wrong-stream cuLaunchKernel report at line {bug_line()}: {merged}\n{said(r)}")
    else:
        print(f"{case}: the checker reported {found[0]['api']} at {found[0]['python']}")
    unchecked = [p for p in merged.get("processes", []) if not (p.get("checked") and p.get("summarized"))]
    if unchecked or not merged.get("processes"):
        failures.append(f"{case}: a process unchecked or unsummarized: {merged.get('processes')}\n{said(r)}")
    if r.returncode != 1 or "streamcheck: FAIL: 1 wrong-stream and 0 capture-breaker" not in r.stderr:
        failures.append(f"{case}: --fail did not fail the run for the report alone\n{said(r)}")
    if facts.get("launched") != 0 or not facts.get("planted_kernel_ran"):
        failures.append(f"{case}: the planted launch did not run (CUresult {facts.get('launched')})\n{said(r)}")


def judge_alone(r, merged, facts, start, cupti, torch_maps_cupti, failures):
    version = facts.get("cupti_versions", {}).get(cupti, 0)
    records = merged.get("processes", [])
    why = " ".join(p.get("why_unchecked") or "" for p in records)
    print(f"alone: CUPTI {version or '?'} from {cupti}; {sides(facts, start, torch_maps_cupti)}")
    if version >= FIRST_MULTI_SUBSCRIBER_CUPTI:
        print(f"alone: the toolkit's CUPTI {version} allows several subscribers; this case is left out")
        return
    if "CUPTI is held by" in why:
        if not re.search(r"kineto|torch", why) or r.returncode == 0:
            failures.append(f"alone: the checker's refusal names neither kineto nor torch, or --fail passed\n{said(r)}")
        else:
            print(f"alone: the checker was the one refused ({why.strip()}); --fail exited {r.returncode}")
        return
    if not facts:
        failures.append(f"alone: the program wrote no facts\n{said(r)}")
        return
    if start is None or start[1] != "as the only CUPTI subscriber":
        failures.append(f"alone: the checker did not start as the only CUPTI subscriber\n{said(r)}")
    if facts.get("kernel_events"):
        # CUPTI before 13.2 refuses a second subscriber (streamcheck_two_subscribers): this kineto
        # took no callback subscription, and traced through the activity API alone.
        print(
            f"alone: nothing was refused: kineto subscribed to no callbacks, its {facts['kernel_events']} kernel "
            "events came through CUPTI's activity API, beside the checker"
        )
    else:
        refused_by_name(r, facts, "alone", failures)
    judge_report(r, merged, facts, "alone", failures)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: profiler_beside.py CHECK_PY LIBRARY WHEELHOUSE")
    check_py, library, wheelhouse = (os.path.abspath(a) for a in sys.argv[1:4])
    site = os.environ.get("STREAMLIKE_PACKAGE_SITE")
    python = (site and os.environ.get("STREAMLIKE_PACKAGE_PYTHON")) or sys.executable
    env = environment()
    problem, seen = probe(python, env)
    if problem:
        skip(problem)
    torch_maps_cupti = bool(seen["cupti"])
    print(f"profiler_beside.py: torch {seen['torch']}; import torch maps {seen['cupti'] or 'no libcupti'}")
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        shared = wheel_cupti(wheelhouse, folder)
        if shared is None:
            print(f"profiler_beside.py: no nvidia-cuda-cupti wheel in {wheelhouse} (STREAMLIKE_CUPTI_WHEEL); skipped")
            sys.exit(SKIP)
        r, merged, facts, start = run_case("shared", shared, python, check_py, library, env, folder)
        if r.returncode == SKIP:
            skip(r.stdout.strip() or "the program skipped")
        judge_shared(r, merged, facts, start, shared, torch_maps_cupti, failures)
        alone = toolkit_cupti()
        if alone is None:
            print("alone: no toolkit CUPTI ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda); this case is left out")
        else:
            r, merged, facts, start = run_case("alone", alone, python, check_py, library, env, folder)
            judge_alone(r, merged, facts, start, alone, torch_maps_cupti, failures)
    if failures:
        print("FAILED:\n" + "\n\n".join(failures))
        sys.exit(1)
    print("PASS: beside torch's profiler: both work where CUPTI shares, and one is refused, loudly, where not")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
    else:
        main()
