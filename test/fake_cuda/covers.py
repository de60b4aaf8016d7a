"""The fake CUDA (test/fake_cuda/) answers every CUDA call libstreamlike makes: each cuda*/cu* symbol
that libstreamlike.so imports is defined by the fake library, except the ones that only read a
table (an error's name and text), which the real runtime answers without a device. A call the fake
lacked would reach the real runtime with a fake handle: a wrong answer without a GPU, a crash with
one. Usage: covers.py LIBSTREAMLIKE FAKE_CUDA_LIBRARY
"""

import re
import subprocess
import sys

PASSED_THROUGH = {"cudaGetErrorName", "cudaGetErrorString"}


def symbols(library, which):
    out = subprocess.run(["nm", "-D", which, library], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if parts:
            names.add(parts[-1].split("@")[0])
    return {n for n in names if re.match(r"cu[A-Z]|cuda[A-Z]", n)}


imports = symbols(sys.argv[1], "--undefined-only")
defined = symbols(sys.argv[2], "--defined-only")
missing = sorted(imports - defined - PASSED_THROUGH)
if not imports:
    sys.exit(f"covers.py: no CUDA imports found in {sys.argv[1]}; is it the library?")
print(f"covers.py: libstreamlike imports {len(imports)} CUDA functions; the fake defines {len(defined)}")
if missing:
    print("covers.py: FAIL the fake CUDA does not define: " + ", ".join(missing))
    print(
        "  add them to test/fake_cuda/ (the runtime's to fake_cuda_streams.cpp, fake_cuda_events.cpp or"
        " fake_cuda_graphs.cpp, the driver's to fake_cuda_driver.cpp), and what they do under capture to fake_cuda.h"
    )
    sys.exit(1)
print("covers.py: every CUDA call of libstreamlike reaches the fake")
