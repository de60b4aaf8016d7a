#!/usr/bin/env python3
"""An extension module on streamlike imported before torch, then torch used: must work.

Usage: import_before_torch.py MODULE_FILE
  MODULE_FILE: the nanobind test module, streamlike_nb_test.*.so (test/bridge builds it; it links
  libstreamlike.so).

A libstreamlike.so that re-exports the C++ runtime it was linked with (std::__once_callable,
__cxa_*) interposes those symbols for everything loaded after it: torch, imported next, then
crashes in std::call_once (torch::get_symint_class). Imported after torch the same library works,
which is why the order is the test. check_exports.py checks the cause; this checks the symptom,
where torch is installed.

The import and the torch work run in a child interpreter, so that a crash is reported as a failure
that says what happened rather than taking the test runner down. The child imports the module,
then torch, runs a CPU op, and with CUDA: a CUDA op, a torch stream passed to C++ (handle, sync,
is_done), a C++-made stream used by torch (torch.cuda.ExternalStream), and a C++ wait between the
two whose result torch checks.

Exit status: 0 pass, 1 fail, 77 skip (torch is not installed; or torch has no CUDA, after the CPU
part passed).
"""

import importlib.util
import signal
import subprocess
import sys
from pathlib import Path

SKIP = 77
TIMEOUT_S = 300
MODULE_NAME = "streamlike_nb_test"  # the name its PyInit_ function carries
N = 1 << 20


def child(module_file):
    spec = importlib.util.spec_from_file_location(MODULE_NAME, module_file)
    bridge = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bridge)
    libraries = sorted(
        {line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines() if "libstreamlike" in line}
    )
    print(f"imported {module_file} first; libstreamlike loaded from: {', '.join(libraries) or '(not found)'}")
    if not libraries:
        print("FAIL: the module did not load libstreamlike.so, so this test proves nothing")
        return 1

    import torch  # second, on purpose

    print(f"then torch {torch.__version__} from {Path(torch.__file__).parent}")
    cpu = torch.zeros(1) + 1
    assert cpu.item() == 1.0, f"torch.zeros(1) + 1 gave {cpu.item()}"
    if not torch.cuda.is_available():
        print(
            "SKIP: torch imported and ran on the CPU after the module; torch has no CUDA, so the CUDA part did not run"
        )
        return SKIP

    gpu = torch.zeros(1, device="cuda") + 1
    assert gpu.item() == 1.0, f"torch.zeros(1, device='cuda') + 1 gave {gpu.item()}"

    # A torch stream into C++.
    theirs = torch.cuda.Stream()
    assert bridge.handle_of(theirs) == theirs.cuda_stream, "C++ saw another handle than torch's stream has"
    with torch.cuda.stream(theirs):
        twos = torch.ones(N, device="cuda") * 2
    bridge.sync(theirs)  # streamlike synchronizes torch's stream
    assert bridge.is_done(theirs), "is_done() is false right after sync()"
    assert twos.sum().item() == 2.0 * N, f"sum of twos: {twos.sum().item()}"

    # A stream made by libstreamlike, used by torch, and ordered by a C++ wait.
    mine = bridge.create_stream()
    assert bridge.stream_device(mine) == torch.cuda.current_device()
    with torch.cuda.stream(torch.cuda.ExternalStream(mine.handle)):
        torch.cuda._sleep(50_000_000)  # so that a missing wait would show
        threes = torch.full((N,), 3.0, device="cuda")
    bridge.wait(theirs, mine)  # torch's stream waits for the work queued on the C++ stream
    with torch.cuda.stream(theirs):
        fours = threes + 1
    theirs.synchronize()
    assert fours.sum().item() == 4.0 * N, f"sum of threes + 1: {fours.sum().item()} (the wait did not order them)"
    del twos, threes, fours
    torch.cuda.synchronize()
    del mine  # destroyed by libstreamlike, after torch is done with it
    print("OK")
    return 0


def main(argv):
    if len(argv) == 2 and argv[0] == "--child":
        return child(argv[1])
    if len(argv) != 1:
        print(__doc__)
        return 2
    module_file = Path(argv[0])
    if not module_file.is_file():
        print(f"FAIL: no module at {module_file} (build it: meson compile -C BUILD python-modules)")
        return 1
    if importlib.util.find_spec("torch") is None:
        print(f"SKIP: torch is not installed for {sys.executable}")
        return SKIP
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(module_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT_S,
    )
    print(proc.stdout, end="")
    if proc.returncode == SKIP:
        return SKIP
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name
        print(
            f"FAIL: the interpreter was killed by {name} with {MODULE_NAME} imported before torch. The likely "
            "cause: libstreamlike.so exports symbols of the C++ runtime; run test/symbols/check_exports.py on the "
            "library named above"
        )
        return 1
    if proc.returncode != 0 or not proc.stdout.rstrip().endswith("OK"):
        print(f"FAIL: exit status {proc.returncode}, expected 0 and a last line OK")
        return 1
    print("PASS: the module imported before torch, and torch works")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
