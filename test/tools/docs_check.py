#!/usr/bin/env python3
"""The guides checked against the tree, so that they cannot drift unnoticed:

- every public header is listed in its guide (a backticked name ending in the header's path below
  include/streamlike/, or its file name in a row that names a sibling in full): the core's,
  detail/'s and c/'s in docs/README.md ("The headers"), python/'s in docs/python-bridge.md,
  adapters/' in docs/adapters.md;
- every name of the Python package's __all__ has a row in the parity table of
  docs/python-package.md ("Every public facility of the C++ library");
- every path the guides, README.md and bench/RESULTS.md name exists: a backticked token that starts
  with a top-level folder of the tree (include/, src/, test/, ...), and every relative link;
- the layout of docs/developing.md ("## Layout") names every top-level folder, every folder of test/
  and every script of scripts/, and only ones that exist;
- every claim of bench/RESULTS.md (each "## " section but the method, the command and the open
  concerns) has one shape: a table of claim, target, latest verdict, command, commit and raw file,
  in that order, its commit a hash and its raw file a link.

    python3 test/tools/docs_check.py [SOURCE_ROOT]

Exit status 0 when all hold; 1, naming each problem and the file that has it, when one does not.
"""

import ast
import re
import sys
from pathlib import Path

TOP = (
    "include/streamlike",
    "src/",
    "test/",
    "bench/",
    "python/",
    "scripts/",
    "docs/",
    "examples/",
    "packaging/",
    ".ci/",
)
CHECKED = ["README.md", "bench/RESULTS.md", "CHANGELOG.md"]  # and docs/*.md
HEADER_GUIDES = [  # (folder below include/streamlike, guide); the first match wins
    ("python", "docs/python-bridge.md"),
    ("adapters", "docs/adapters.md"),
    ("", "docs/README.md"),
]
TICKED = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def headers(root):
    base = root / "include" / "streamlike"
    return sorted(p.relative_to(base).as_posix() for p in base.rglob("*") if p.suffix in (".hpp", ".h"))


def guide_of(header):
    for folder, guide in HEADER_GUIDES:
        if folder == "" or header.startswith(folder + "/"):
            return guide
    raise AssertionError(header)


def listed_headers(text):
    """Header names a guide lists: each backticked token ending in .hpp/.h, in full, and the bare
    file names in a table row or list item that also names a header with its folder."""
    names = set()
    for line in text.splitlines():
        tokens = [t.strip() for t in TICKED.findall(line) if t.strip().endswith((".hpp", ".h"))]
        folders = {t.rsplit("/", 1)[0] for t in tokens if "/" in t}
        for token in tokens:
            token = token.removeprefix("include/").removeprefix("streamlike/")
            names.add(token)
            if "/" not in token:
                names.update(
                    f"{folder.removeprefix('include/').removeprefix('streamlike/')}/{token}" for folder in folders
                )
    return names


def check_headers(root):
    out = []
    texts = {}
    for header in headers(root):
        guide = guide_of(header)
        if guide not in texts:
            texts[guide] = listed_headers((root / guide).read_text())
        if header not in texts[guide]:
            out.append(f"{guide}: does not list include/streamlike/{header}")
    return out


def package_names(root):
    tree = ast.parse((root / "python" / "streamlike" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return [ast.literal_eval(e) for e in node.value.elts]
    raise SystemExit("FAIL: python/streamlike/__init__.py has no __all__")


def parity_table(text):
    start = text.index("Every public facility of the C++ library")
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            rows.append(line)
        elif rows and not line.strip():
            break
    return rows


def check_parity(root):
    guide = "docs/python-package.md"
    rows = parity_table((root / guide).read_text())
    python_cells = " ".join(row.split("|")[2] for row in rows if row.count("|") >= 4)
    ticked = " ".join(TICKED.findall(python_cells))
    return [
        f"{guide}: the parity table has no row for streamlike.{name}"
        for name in package_names(root)
        if not re.search(rf"(?<![\w.]){re.escape(name)}\b", ticked)
    ]


def named_paths(text):
    for token in TICKED.findall(text):
        token = token.strip().split(" ")[0].rstrip(":,.;")
        if token.startswith(TOP + ("python/detail/", "python/", "adapters/", "c/", "detail/")) and not any(
            c in token for c in "<>{}$|="
        ):
            yield token


def exists(root, path):
    # A header or folder may be named from include/streamlike/ (python/detail/cpython.hpp, c/), as
    # #include names it.
    bases = [root, root / "include" / "streamlike"]
    if any(c in path for c in "*?["):
        return any(any(base.glob(path)) for base in bases)
    return any((base / path).exists() for base in bases)


def check_paths(root):
    out = []
    files = sorted((root / "docs").glob("*.md")) + [root / f for f in CHECKED if (root / f).exists()]
    for md in files:
        text = md.read_text()
        name = md.relative_to(root).as_posix()
        for path in sorted(set(named_paths(text))):
            if not exists(root, path):
                out.append(f"{name}: names {path}, which does not exist")
        for link in sorted(set(LINK.findall(text))):
            if "://" in link or link.startswith("mailto:"):
                continue
            if not (md.parent / link).exists():
                out.append(f"{name}: links to {link}, which does not exist")
    return out


def layout_block(text):
    section = text[text.index("## Layout") :]
    return section[section.index("```") + 3 : section.index("```", section.index("```") + 3)]


def check_layout(root):
    guide = "docs/developing.md"
    block = layout_block((root / guide).read_text())
    out = []
    entries = [line.split()[0] for line in block.splitlines() if line.strip() and not line.startswith(" ")]
    for entry in entries:
        if not (root / entry).exists():
            out.append(f"{guide}: the layout names {entry}, which does not exist")
    tracked_top = {p.name for p in root.iterdir() if p.is_dir()} & {e.rstrip("/").split("/")[0] for e in TOP}
    named_top = {e.rstrip("/").split("/")[0] for e in entries}
    for folder in sorted(tracked_top - named_top):
        out.append(f"{guide}: the layout does not name {folder}/")

    def listed_after(entry):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.startswith(entry):
                text = line[len(entry) :]
                for more in lines[i + 1 :]:
                    if more.strip() and not more.startswith(" "):
                        break
                    text += " " + more
                return set(re.findall(r"[\w.-]+", text.split(":", 1)[-1]))
        return set()

    test_folders = {p.name for p in (root / "test").iterdir() if p.is_dir() and p.name != "__pycache__"}
    named = listed_after("test/")
    for folder in sorted(test_folders - named):
        out.append(f"{guide}: the layout's test/ line does not name test/{folder}")
    for folder in sorted(named - test_folders):  # after the colon, the line names folders only
        out.append(f"{guide}: the layout's test/ line names test/{folder}, which does not exist")
    scripts = {p.name for p in (root / "scripts").iterdir() if p.is_file()}
    named = listed_after("scripts/")
    for script in sorted(scripts - named):
        out.append(f"{guide}: the layout's scripts/ line does not name scripts/{script}")
    return out


RESULTS_NOT_CLAIMS = {"How a verdict is reached", "The command", "Open concerns"}
RESULTS_ROWS = ["claim", "target", "latest verdict", "command", "commit", "raw"]


def check_results(root):
    name = "bench/RESULTS.md"
    out = []
    sections = re.split(r"^## ", (root / name).read_text(), flags=re.M)[1:]
    for section in sections:
        title = section.splitlines()[0].strip()
        if title in RESULTS_NOT_CLAIMS:
            continue
        rows = re.findall(r"^\| \*\*([a-z ]+)\*\* \| (.*) \|$", section, flags=re.M)
        if [label for label, _ in rows] != RESULTS_ROWS:
            out.append(f'{name}: "{title}" has rows {[label for label, _ in rows]}, expected {RESULTS_ROWS}')
            continue
        cells = dict(rows)
        if not re.fullmatch(r"[^|]*\b[0-9a-f]{7,40}\b[^|]*", cells["commit"]):
            out.append(f'{name}: "{title}": the commit {cells["commit"]!r} names no commit hash')
        if not LINK.search(cells["raw"]):
            out.append(f'{name}: "{title}": the raw file {cells["raw"]!r} is not a link')
    return out


def main(argv):
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[2]
    problems = check_headers(root) + check_parity(root) + check_paths(root) + check_layout(root) + check_results(root)
    for line in problems:
        print("FAIL: " + line)
    if not problems:
        print("PASS: every header in its guide, every package name in the parity table, every named path exists,")
        print("      the layout is current, every benchmark claim in one shape")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
