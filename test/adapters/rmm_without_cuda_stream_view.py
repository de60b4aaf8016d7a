#!/usr/bin/env python3
"""Writes a copy of RMM's headers as RMM 26.12 ships them: without rmm::cuda_stream_view.

Usage: rmm_without_cuda_stream_view.py RMM_INCLUDE_DIR OUT_DIR STAMP

RMM 26.12 removes rmm::cuda_stream_view, its header <rmm/cuda_stream_view.hpp> and the
default-stream constants declared there (RMM's migration guide: use cuda::stream_ref). Until that
release is on PyPI, the rmm adapter test also builds against this copy of an installed RMM 26.x:
OUT_DIR/include holds rmm/ with cuda_stream_view.hpp removed, every member declaration that names
cuda_stream_view removed with its doc comment, the #include of the removed header removed, and the
version set to 26.12.0 (but RMM's ABI namespace, which stays that of the library the headers came
from: the test links to it); the other folders of RMM_INCLUDE_DIR but rapids/ (the CCCL RMM ships, which
the test finds in its own place) are linked in. It fails, saying where, if cuda_stream_view is still
named anywhere afterwards (an RMM whose headers use it in ways this does not know). STAMP is written
last, for the build to depend on.
"""

import os
import re
import shutil
import sys

REMOVED = "cuda_stream_view"
# A doc comment and the member declaration after it (up to its semicolon), at any indentation.
DOCUMENTED_MEMBER = re.compile(r"[ \t]*/\*\*(?:(?!\*/).)*\*/[ \t]*\n(?P<declaration>[^;{}]*;)[ \t]*\n", re.DOTALL)
INCLUDE_REMOVED = re.compile(r"^[ \t]*#[ \t]*include[ \t]*<rmm/cuda_stream_view\.hpp>[ \t]*\n", re.MULTILINE)


def without_stream_view(text):
    text = INCLUDE_REMOVED.sub("", text)
    return DOCUMENTED_MEMBER.sub(lambda m: "" if REMOVED in m.group("declaration") else m.group(0), text)


def version_of(source):
    with open(os.path.join(source, "rmm", "version_config.hpp"), encoding="utf-8") as f:
        text = f.read()
    return tuple(int(re.search(rf"#define RMM_VERSION_{part} (\d+)", text).group(1)) for part in ("MAJOR", "MINOR"))


def linked_to(text, version):
    # RMM's ABI namespace (rmm::_RMM_<major>_<minor>) follows the version; the copy is linked to the
    # library the headers came from, so it keeps that library's.
    return text.replace(
        "RMM_DETAIL_ABI_NAMESPACE(RMM_VERSION_MAJOR, RMM_VERSION_MINOR)",
        f"RMM_DETAIL_ABI_NAMESPACE({version[0]}, {version[1]})",
    )


def as_26_12(text):
    text = re.sub(r"(#define RMM_VERSION_MINOR )\d+", r"\g<1>12", text)
    text = re.sub(r"(#define RMM_VERSION_PATCH )\d+", r"\g<1>0", text)
    return re.sub(r'(#define RMM_VERSION )"[^"]*"', r'\1"26.12.0"', text)


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    source, out, stamp = argv[1:]
    if not os.path.isfile(os.path.join(source, "rmm", "cuda_stream_view.hpp")):
        print(f"{argv[0]}: {source} holds no rmm/cuda_stream_view.hpp; expected RMM 26.10's headers", file=sys.stderr)
        return 1
    version = version_of(source)
    include = os.path.join(out, "include")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(include)
    for entry in sorted(os.listdir(source)):
        if entry == "rmm":
            shutil.copytree(os.path.join(source, entry), os.path.join(include, entry))
        elif entry != "rapids":
            os.symlink(os.path.join(os.path.abspath(source), entry), os.path.join(include, entry))
    rmm = os.path.join(include, "rmm")
    os.remove(os.path.join(rmm, "cuda_stream_view.hpp"))
    still_named = []
    for folder, _, files in os.walk(rmm):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            edited = without_stream_view(text)
            if name == "version_config.hpp":
                edited = as_26_12(edited)
            elif name == "export.hpp":
                edited = linked_to(edited, version)
            if edited != text:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(edited)
            still_named += [
                f"{os.path.relpath(path, include)}:{i}"
                for i, line in enumerate(edited.splitlines(), 1)
                if REMOVED in line and not line.lstrip().startswith(("*", "//"))
            ]
    if still_named:
        print(f"{argv[0]}: {REMOVED} is still named in the copy at {', '.join(still_named)}", file=sys.stderr)
        return 1
    with open(stamp, "w", encoding="utf-8") as f:
        f.write(f"// RMM's headers from {source} without {REMOVED}, as 26.12: {include}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
