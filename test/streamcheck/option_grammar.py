"""One table of STREAMLIKE_CHECK and STREAMLIKE_CHECK_ALLOW values, fed to the checker library (preloaded
into a Python that makes no CUDA call: it parses its options as it starts) and to python -m
streamlike.check's validator, which refuses a value before the program starts: both must accept the
same values and refuse the others in the same words. What keeps the command's copy of the grammar
(check.py) the library's (src/streamcheck/options.cpp).

usage: option_grammar.py CHECK_PY LIBRARY"""

import importlib.util
import os
import subprocess
import sys

check_py, library = (os.path.abspath(a) for a in sys.argv[1:3])
spec = importlib.util.spec_from_file_location("check", check_py)
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

CHECK_VALUES = [
    "wrong-stream", "capture", "all", "1", "0", "off", "wrong-stream=strict", "wrong-stream,capture",
    " wrong-stream , capture ", "capture,", ",", "", "   ", "wrong-stream,off", "all,0",
    "bogus", "Wrong-Stream", "wrong-stream=lax", "wrong_stream", "all,bogus", "on", "true", "capture\t",
    "wrong-stream;capture", "strict",
]  # fmt: skip
ALLOW_VALUES = [
    "lib:libnccl", "sym:ncclKernel", "py:torch", "py:torch.nn", "py:_x1.y_2", "py:1abc", "lib:a:b",
    " lib:x , sym:y ", "lib:x,,sym:y", ",", "", "sym:operator+", "lib: x", "py:ñame", "py:é.x",
    "lib", "lib:", "py:", ":x", "LIB:x", "nccl", "py:a..b", "py:.a", "py:a.", "py:a-b", "py:a/b",
    "py:a b", "py:torch.nn/", "lib:x,py:a/b", "lib:x,bogus", "py:torch,py:", "sym:x:y,py:a.b",
]  # fmt: skip


def library_says(variable, value):
    """The library's refusal of variable=value, None where it accepted it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIKE_CHECK") and k != "CUDA_INJECTION64_PATH"}
    env.update({"LD_PRELOAD": library, variable: value})
    r = subprocess.run([sys.executable, "-c", "pass"], env=env, capture_output=True, timeout=60)
    refusals = [line for line in os.fsdecode(r.stderr).splitlines() if line.startswith(f"streamcheck: {variable}=")]
    if r.returncode != 0 or len(refusals) > 1:
        sys.exit(f"option_grammar.py: {variable}={value!r}: the library's run said {r.stderr!r} (exit {r.returncode})")
    if not refusals:
        return None
    suffix = "; streamcheck is off"
    return refusals[0][: -len(suffix)] if refusals[0].endswith(suffix) else refusals[0]


failures = []
counts = {"accepted": 0, "refused": 0}
for variable, values, validator in (
    ("STREAMLIKE_CHECK", CHECK_VALUES, check.check_value_error),
    ("STREAMLIKE_CHECK_ALLOW", ALLOW_VALUES, check.allow_value_error),
):
    for value in values:
        library_verdict = library_says(variable, value)
        command_verdict = validator(value)
        counts["accepted" if library_verdict is None else "refused"] += 1
        if library_verdict != command_verdict:
            failures.append(
                f"{variable}={value!r}: the library says {library_verdict!r}, the command says {command_verdict!r}"
            )
# A table that the library accepted or refused whole would compare nothing of the grammar.
if counts["accepted"] < 10 or counts["refused"] < 10:
    failures.append(f"the table must hold both kinds of value: {counts}")
if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print(f"option_grammar: the library and the command agree on {sum(counts.values())} values ({counts})")
