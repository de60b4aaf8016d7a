#!/usr/bin/env python3
"""Copies a code example out of a Markdown page, so a test compiles exactly what the page shows.

Usage: extract_docs_example.py PAGE.md NAME OUTPUT

The example is the first ```cpp fenced block after the line `<!-- docs_example: NAME -->`.
Exit status 1 (and no OUTPUT) if the marker or its block is missing: a test must not silently
compile nothing.
"""

import re
import sys


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    page, name, output = argv[1:]
    text = open(page, encoding="utf-8").read()
    marker = f"<!-- docs_example: {name} -->"
    at = text.find(marker)
    if at < 0:
        print(f"{page}: no line {marker!r}", file=sys.stderr)
        return 1
    block = re.compile(r"^```cpp\n(.*?)^```", re.MULTILINE | re.DOTALL).search(text, at)
    if block is None:
        print(f"{page}: no ```cpp block after {marker!r}", file=sys.stderr)
        return 1
    with open(output, "w", encoding="utf-8") as f:
        f.write(f"// Generated from {page} ({marker}); edit the page, not this file.\n#pragma once\n")
        f.write(block.group(1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
