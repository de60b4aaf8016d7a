#!/usr/bin/env python3
"""Checks that a shared libstreamlike exports streamlike's API and nothing else.

Usage: check_exports.py LIBRARY

Lists the defined symbols of LIBRARY's dynamic symbol table (`nm -D --defined-only`) and fails,
naming each, on any that is not streamlike's, and on any of REQUIRED that is missing (hidden by
mistake: a program would not link against it, or would not catch streamlike::error by type).

A symbol is streamlike's when it is one of the C functions of streamlike/c/ (named
streamlike_current_stream_*), or when its mangled name (Itanium C++ ABI) is a name in namespace
streamlike, or the typeinfo, typeinfo name, vtable, guard variable or thread-local wrapper of one.
The mangled name is what decides, not the demangled text: a function template of namespace std
returning a streamlike type demangles as "streamlike::stream_view std::f<...>(...)".

Allowed beyond that: nothing. A shared library has no symbol it must export besides its API
(_init, _fini, _edata, _end, __bss_start are not in the dynamic table of a library linked with a
version script), and every other export is a bug: a C++ runtime linked in statically and
re-exported (std::__once_callable, __cxa_*) interposes the process's own runtime for every library
loaded after it, and an exported template instantiation of std:: binds other modules to our copy.

Exit status: 0 pass, 1 fail, 77 skip (no `nm`: binutils is not installed).
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

SKIP = 77

# N, optionally with cv- and ref-qualifiers (const member functions: NK), then the namespace
# `streamlike` (10 characters). Z...: a local entity of a streamlike function (a static local).
_NESTED = r"Z?N[rVK]*[RO]?10streamlike"
STREAMLIKE_SYMBOL = re.compile(
    r"^streamlike_current_stream_\w+$"  # the C functions of streamlike/c/current_stream_provider.h
    r"|^_Z(?:"
    + _NESTED  # functions and variables
    + r"|T[ISV]N[rVK]*10streamlike"  # typeinfo, typeinfo name, vtable of a class
    + r"|GV"
    + _NESTED  # guard variable of a static local or inline variable
    + r"|T[HW]"
    + _NESTED  # thread_local init function and wrapper
    + r")"
)

# What must be exported, as demangled names (regular expressions, matched in full). One out-of-line
# member per public class with out-of-line code, the free functions, and the typeinfo that must be
# one across the library boundary.
REQUIRED = [
    r"typeinfo for streamlike::error",  # catch (const streamlike::error&) in the program
    r"typeinfo for streamlike::detail::\w*control_block",  # base of blocks made in the program's code
    r"streamlike::error::error\(cudaError, .*\)",
    r"streamlike::detail::throw_error\(.*\)",
    r"streamlike::cuda_error_text(\[abi:cxx11\])?\(cudaError\)",
    r"streamlike::stream_view::sync\(\) const",
    r"streamlike::detail::stream_operations::sync\(CUstream_st\*, char const\*\)",  # the owners' inline sync()
    r"streamlike::shared_stream::create\(streamlike::stream_options\)",
    r"streamlike::unique_stream::create\(streamlike::stream_options\)",
    r"streamlike::event::create\(streamlike::event_options const&\)",
    r"streamlike::elapsed_ms\(streamlike::event const&, streamlike::event const&\)",
    r"streamlike::device_guard::device_guard\(int\)",
    r"streamlike::stream_pool::stream_pool\(unsigned long, streamlike::stream_options const&\)",
    r"streamlike::current_stream\(int\)",
    r"streamlike_current_stream_register",  # the C interface of streamlike/c/current_stream_provider.h
    r"streamlike::detail::current_stream_check_on",  # read by the inline check hook in programs
]

# What must not be exported, though it is streamlike's: code for the benchmarks (their floors live
# in bench/, built only there; the library ships nothing for them). Demangled names, searched.
NOT_EXPORTED = [r"benchmark", r"raw_stream"]


def dynamic_symbols(library):
    """[(type letter, mangled, demangled)] of the defined dynamic symbols."""

    def names(*extra):
        out = subprocess.run(
            ["nm", "-D", "--defined-only", *extra, str(library)],
            check=True,
            text=True,
            capture_output=True,
        ).stdout
        # "ADDRESS TYPE NAME" (NAME may contain spaces once demangled)
        return [line.split(" ", 2)[1:] for line in out.splitlines() if line.strip()]

    mangled = names()
    demangled = names("--demangle")
    if len(mangled) != len(demangled):
        raise RuntimeError("nm listed a different number of symbols with and without --demangle")
    return [(kind, name, pretty) for (kind, name), (_, pretty) in zip(mangled, demangled, strict=True)]


def check(library):
    """Problems found in LIBRARY's exports, as lines of text; empty when it passes."""
    symbols = dynamic_symbols(library)
    problems = []
    foreign = [(kind, name, pretty) for kind, name, pretty in symbols if not STREAMLIKE_SYMBOL.match(name)]
    if foreign:
        problems.append(
            f"{library} exports {len(foreign)} symbol(s) that are not streamlike's "
            "(expected: only names in namespace streamlike; mark the API with STREAMLIKE_API, "
            "and keep hidden visibility and the link arguments of library() in meson.build):"
        )
        problems += [f"  {kind} {pretty}" + (f"  [{name}]" if name != pretty else "") for kind, name, pretty in foreign]
    exported = [pretty for _, _, pretty in symbols]
    for pattern in NOT_EXPORTED:
        hits = [pretty for pretty in exported if re.search(pattern, pretty)]
        if hits:
            problems.append(f"{library} exports {len(hits)} symbol(s) for benchmarks (bench/ holds those):")
            problems += [f"  {pretty}" for pretty in hits]
    missing = [pattern for pattern in REQUIRED if not any(re.fullmatch(pattern, pretty) for pretty in exported)]
    if missing:
        problems.append(
            f"{library} does not export {len(missing)} required symbol(s) (hidden: mark the "
            "declaration or its class STREAMLIKE_API, include/streamlike/detail/export.hpp):"
        )
        problems += [f"  {pattern.replace(chr(92), '')}" for pattern in missing]  # shown without the regex escapes
    return problems, symbols


def main(argv):
    if len(argv) != 1:
        print(__doc__)
        return 2
    if shutil.which("nm") is None:
        print("SKIP: nm (binutils) is not installed")
        return SKIP
    library = Path(argv[0])
    if not library.is_file():
        print(f"FAIL: no library at {library}")
        return 1
    problems, symbols = check(library)
    if problems:
        print("FAIL: " + "\n".join(problems))
        return 1
    print(f"PASS: {library} exports {len(symbols)} symbols, all streamlike's, the required ones included")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
