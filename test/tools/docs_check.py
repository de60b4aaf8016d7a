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
  in that order, its commit a hash and its raw file a link; its verdict is one run (one date, no
  commit but the commit row's, no link to another raw file); and every file under bench/results/
  is cited by a claim, so a run no claim reads any more is deleted, not kept;
- the comments and messages of the code (include/, src/, python/, test/, bench/, scripts/,
  examples/) name only paths and files that exist (a path from a top-level folder, from the root or
  from include/streamlike/; a program built from a source of that name counts; a bare file name in
  a comment, anywhere in the tree), no file outside the tree, and only sections that exist (a
  page's name, then the section's in quotes: a heading of that page that starts so);
- no comment in include/, src/ or python/ carries a timing figure (ns, us, ms, a percentage, an
  x-ratio): figures go stale, and live in bench/RESULTS.md, which comments name by section.

    python3 test/tools/docs_check.py [SOURCE_ROOT]

Exit status 0 when all hold; 1, naming each problem and the file that has it, when one does not.
"""

import ast
import os
import re
import subprocess
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


RESULTS_HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


def claim_sections(root):
    text = (root / "bench" / "RESULTS.md").read_text()
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        title = section.splitlines()[0].strip()
        if title not in RESULTS_NOT_CLAIMS:
            yield title, section


def check_results_runs(root):
    """Each verdict is one run, and every raw file is cited by a claim."""
    name = "bench/RESULTS.md"
    out = []
    cited = set()
    for title, section in claim_sections(root):
        cited.update(os.path.normpath(f"bench/{link}") for link in LINK.findall(section))
        cells = dict(re.findall(r"^\| \*\*([a-z ]+)\*\* \| (.*) \|$", section, flags=re.M))
        verdict, commit = cells.get("latest verdict", ""), cells.get("commit", "")
        dates = sorted(set(re.findall(r"\b\d{4}-\d{2}-\d{2}\b", verdict)))
        if len(dates) > 1:
            out.append(f'{name}: "{title}": the verdict names {len(dates)} dates ({", ".join(dates)}): one run')
        others = sorted(set(RESULTS_HASH.findall(verdict)) - set(RESULTS_HASH.findall(commit)))
        if others:
            out.append(f'{name}: "{title}": the verdict names commits the commit row does not ({", ".join(others)})')
        if LINK.search(verdict):
            out.append(f'{name}: "{title}": the verdict links to a raw file: a run\'s file belongs in the raw row')
    results = root / "bench" / "results"
    for path in sorted(p for p in results.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel not in cited:
            out.append(f"{name}: no claim cites {rel} (delete it: git keeps the run)")
    return out


CODE_FOLDERS = ["include", "src", "python", "test", "bench", "scripts", "examples"]
NOT_CODE = ("bench/results/", "test/fuzz/corpus/")
CODE_SUFFIXES = {".cpp", ".hpp", ".h", ".c", ".cu", ".cuh", ".py", ".pyi", ".pyx", ".pxd", ".sh", ".build", ".map"}
PATH_FOLDERS = ("include/streamlike", "src/", "test/", "bench/", "python/", "scripts/", "docs/", "examples/")
PATH_FOLDERS += ("packaging/", ".ci/")
CODE_PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(re.escape(f) for f in PATH_FOLDERS) + r")[\w./+-]*[\w/])")
FILE_NAME = re.compile(r"(?<![\w/.-])([\w-]+\.(?:cpp|hpp|cu|cuh|py|pyi|pyx|pxd|md|sh))\b")
SECTION_REF = re.compile(r'((?:docs/|bench/)?[\w-]+\.md),? "([^"]+)"')
# Names of other projects' files, or of files a test makes up, that code comments mention.
NOT_OURS = {
    "src/nb_combined.cpp": "nanobind's, shipped in its pip package",
    "cuda_stream_view.hpp": "RMM's",
    "torch_utils.py": "torch's",
    "file.cpp": "a call site's file, as a report shows it",
    "file.py": "a call site's file, as a report shows it",
    "script.py": "a user's program, in a usage line",
    "framework.py": "a frame the checker's tests make up",
    "user.py": "a frame the checker's tests make up",
    "PAGE.md": "a placeholder for a guide's name",
    "include/streamlike/python/detail/bad.hpp": "a header the bridge's include rule test makes up",
}


def code_files(root):
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard", *CODE_FOLDERS],
        capture_output=True,
        text=True,
    )
    names = listed.stdout.split() if listed.returncode == 0 else []
    if not names:  # not a git checkout: every file of the folders
        names = [p.relative_to(root).as_posix() for f in CODE_FOLDERS for p in (root / f).rglob("*") if p.is_file()]
    for name in sorted(set(names)):
        path = root / name
        if name.startswith(NOT_CODE) or not path.is_file():
            continue
        script = name.startswith("scripts/") and not path.suffix
        if path.suffix in CODE_SUFFIXES or path.name == "meson.build" or script:
            yield name, path.read_text(errors="replace")


def comments(name, text):
    """The comments of a source file, joined (C and C++: // and /* */; the others: # and docstrings)."""
    if name.endswith((".cpp", ".hpp", ".h", ".c", ".cu", ".cuh")):
        found = re.findall(r"//[^\n]*|/\*.*?\*/", text, flags=re.S)
    else:
        found = re.findall(r"#[^\n]*", text)
        if name.endswith((".py", ".pyi", ".pyx")):
            found += re.findall(r'"""(.*?)"""', text, flags=re.S)
    return "\n".join(found)


def headings(md):
    """A page's headings, without their numbers and backticks."""
    return [re.sub(r"^\d+\.\s*", "", h.replace("`", "")).strip() for h in re.findall(r"^#+ (.*)$", md, flags=re.M)]


def path_exists(root, token):
    if exists(root, token):
        return True
    # A program (bench/stream_pool, examples/tour) is named after the source it is built from.
    folder, base = os.path.split(token)
    return any(p.stem == base and p.is_file() for p in (root / folder).glob(base + ".*")) if base else False


def check_code_references(root):
    tracked = {p.name for f in CODE_FOLDERS + ["docs", "packaging", ".ci"] for p in (root / f).rglob("*")}
    tracked |= {p.name for p in root.iterdir()}
    pages = {}
    out = []
    for name, text in code_files(root):
        for token in sorted(set(CODE_PATH.findall(text))):
            token = token.rstrip(".")
            placeholder = any(c in token for c in "*?{}<>$") or any(part.isupper() for part in token.split("/"))
            if placeholder or token.endswith(("_", "-")) or token in NOT_OURS:
                continue
            if not path_exists(root, token):
                out.append(f"{name}: names {token}, which does not exist")
        notes = comments(name, text)
        for file_name in sorted(set(FILE_NAME.findall(notes)) - tracked - set(NOT_OURS)):
            out.append(f"{name}: a comment names {file_name}, which is no file of the tree")
        for page, title in SECTION_REF.findall(re.sub(r"\n\s*(?://+|#|\*)\s*", " ", text)):
            if page == "RESULTS.md":  # named from the code, as the benchmarks' page
                page = "bench/RESULTS.md"
            page = page if page.startswith(("docs/", "bench/")) or page == "README.md" else "docs/" + page
            if not (root / page).is_file():
                out.append(f'{name}: names {page}, "{title}": the page does not exist')
                continue
            if page not in pages:
                pages[page] = headings((root / page).read_text())
            title = re.sub(r"\s+", " ", title).rstrip(".")
            if not any(h.startswith(title) for h in pages[page]):
                out.append(f'{name}: names {page}, "{title}": the page has no such section')
    return out


TIMING = re.compile(
    r"(?<![\w.])(?:\d+(?:[.,]\d+)?(?:-\d+(?:\.\d+)?)?(?:\s?(?:ns|us|µs|ms)\b|%)|(?!0x)\d+(?:\.\d+)?x\b)"
)


def check_timing_comments(root):
    out = []
    for name, text in code_files(root):
        if not name.startswith(("include/", "src/", "python/")):
            continue
        for line in comments(name, text).splitlines():
            figures = TIMING.findall(line)
            if figures:
                out.append(f"{name}: a comment carries a timing figure ({', '.join(figures)}): {line.strip()}")
    return out


def main(argv):
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[2]
    problems = (
        check_headers(root)
        + check_parity(root)
        + check_paths(root)
        + check_layout(root)
        + check_results(root)
        + check_results_runs(root)
        + check_code_references(root)
        + check_timing_comments(root)
    )
    for line in problems:
        print("FAIL: " + line)
    if not problems:
        print("PASS: every header in its guide, every package name in the parity table, every named path exists,")
        print("      the layout is current, every benchmark claim in one shape and one run, every raw file cited,")
        print("      every path, file and section the code names exists, no timing figure in a comment")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
