#!/usr/bin/env python3
"""The package's public names agree in its two files: python/streamlike/__init__.py (what the
package is) and __init__.pyi (what type checkers read). Source only, nothing imported or built.

Checked: both files' __all__ are the same list, sorted, without repeats; it names exactly the public
names __init__.py binds (imports, classes, functions) and exactly the public names the stub declares
(classes, functions, `from ... import X as X` re-exports). A name added to one file and not the
other, or left out of __all__, fails here, naming it.

    python3 test/package/package_names_check.py [PACKAGE_FOLDER]
"""

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "streamlike"
NOT_IN_ALL = {"__version__"}  # public, but by convention not exported by `import *`


def declared_all(tree, path):
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return [ast.literal_eval(e) for e in node.value.elts]
    raise SystemExit(f"FAIL: {path} has no __all__ = [...]")


def bound_names(tree, stub):
    """Public names a module binds at top level; in a stub only `import X as X` re-exports."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom) and node.level > 0:  # the package's own modules
            for alias in node.names:
                if not stub or alias.asname == alias.name:
                    names.add(alias.asname or alias.name)
    return {n for n in names if not n.startswith("_")}


def problems(package):
    found = []
    source_path, stub_path = package / "__init__.py", package / "__init__.pyi"
    source, stub = ast.parse(source_path.read_text()), ast.parse(stub_path.read_text())
    source_all, stub_all = declared_all(source, source_path), declared_all(stub, stub_path)
    if source_all != stub_all:
        found.append(
            f"__all__ differs: only in {source_path.name}: {sorted(set(source_all) - set(stub_all))}, "
            f"only in {stub_path.name}: {sorted(set(stub_all) - set(source_all))}"
            + (" (same names, another order)" if set(source_all) == set(stub_all) else "")
        )
    if source_all != sorted(set(source_all)):
        found.append(
            f"{source_path.name}: __all__ is not sorted or repeats a name (expected {sorted(set(source_all))})"
        )
    for path, tree, stub_file in ((source_path, source, False), (stub_path, stub, True)):
        bound = bound_names(tree, stub_file) - NOT_IN_ALL
        names = set(declared_all(tree, path))
        if bound - names:
            found.append(f"{path.name} binds public names missing from its __all__: {sorted(bound - names)}")
        if names - bound:
            found.append(f"{path.name}: __all__ names what it does not bind: {sorted(names - bound)}")
    return found


def main(argv):
    package = Path(argv[0]) if argv else PACKAGE
    found = problems(package)
    for line in found:
        print("FAIL: " + line)
    if not found:
        count = len(declared_all(ast.parse((package / "__init__.py").read_text()), package))
        print(f"PASS: {package}/__init__.py and __init__.pyi export the same {count} names")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
