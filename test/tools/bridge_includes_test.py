#!/usr/bin/env python3
"""Data flows one way: the package (python/streamlike/) is built on the bridge
(include/streamlike/python/), never the reverse. Every #include of a bridge header is a system
header (Python's, nanobind's, pybind11's, the standard library's) or a header of include/streamlike/
that exists there; a quoted include, or a <streamlike/...> one that only the package's folder could
satisfy (python/ is on the package's include path), fails here, named. So a bridge header cannot
come to need the package: what both use lives in the bridge, and the package calls it.

The check is first run on a small made-up tree holding one of each bad include, which it must find,
so that it cannot pass by finding nothing.

    python3 test/tools/bridge_includes_test.py [SOURCE_ROOT]
"""

import re
import sys
import tempfile
from pathlib import Path

BRIDGE = "include/streamlike/python"
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def problems(root):
    out = []
    bridge = root / BRIDGE
    if not bridge.is_dir():
        return [f"{BRIDGE} is missing"]
    for path in sorted(bridge.rglob("*")):
        if path.suffix not in {".hpp", ".h"}:
            continue
        name = path.relative_to(root).as_posix()
        for quote, included in INCLUDE.findall(path.read_text()):
            if quote == '"':
                out.append(f'{name} includes "{included}": a bridge header includes <streamlike/...> headers only')
            elif included.startswith("streamlike/") and not (root / "include" / included).is_file():
                where = " (a file of the package)" if (root / "python" / included).is_file() else ""
                out.append(f"{name} includes <{included}>, which include/ does not have{where}")
    return out


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / BRIDGE / "detail").mkdir(parents=True)
        (root / "python" / "streamlike").mkdir(parents=True)
        (root / "python" / "streamlike" / "package.hpp").write_text("")
        (root / BRIDGE / "good.hpp").write_text("#include <Python.h>\n#include <streamlike/python/good.hpp>\n")
        (root / BRIDGE / "detail" / "bad.hpp").write_text(
            '#include "package.hpp"\n  #  include <streamlike/package.hpp>\n#include <vector>\n'
        )
        found = problems(root)
        expected = [
            'include/streamlike/python/detail/bad.hpp includes "package.hpp": a bridge header includes '
            "<streamlike/...> headers only",
            "include/streamlike/python/detail/bad.hpp includes <streamlike/package.hpp>, which include/ does "
            "not have (a file of the package)",
        ]
        return [] if found == expected else [f"the check on a made-up tree found {found}, expected {expected}"]


def main(argv):
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[2]
    out = self_test() + problems(root)
    for line in out:
        print("FAIL: " + line)
    if not out:
        print(f"PASS: every header under {BRIDGE} includes system headers and include/streamlike/ ones only")
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
