#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets: the edge values of the table in
include/streamlike/stream_encodings.hpp, one small file each, in the byte layout that
fuzz_support.hpp reads (fixed-size little-endian fields, zero-padded).

    test/fuzz/make_corpus.py           rewrite test/fuzz/corpus/ (then commit it)
    test/fuzz/make_corpus.py --check   exit 1 if the committed corpus differs (run.py calls this)
"""

import argparse
import pathlib
import struct
import sys

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE / "corpus"

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
TYPICAL = 0x7F3A1C004A10  # a realistic heap address, as a Python int carries it


def i64(v):
    return struct.pack("<q", v)


def optional_i64(v):
    # one byte: low bit set when present; then the value
    return b"\x00" + i64(0) if v is None else b"\x01" + i64(v)


def name_of(v):
    return "none" if v is None else ("m" + str(-v) if v < 0 else str(v))


def protocol_seeds():
    pairs = [
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
        (0, TYPICAL),
        (0, INT64_MAX),  # accepted
        (0, -1),
        (0, -2),
        (0, INT64_MIN),  # negative address
        (1, 5),
        (2, 0),
        (-1, 5),
        (INT64_MIN, 0),
        (INT64_MAX, TYPICAL),
    ]  # versions other than 0
    return {f"v{name_of(v)}_a{name_of(a)}": i64(v) + i64(a) for v, a in pairs}


def optional_seeds():
    values = [None, -1, 0, 1, 2, 3, TYPICAL, INT64_MAX, -2, -3, INT64_MIN]
    return {name_of(v): optional_i64(v) for v in values}


# The types of from_address.cpp's integer_types, in its order: (name, size, signed).
ADDRESS_TYPES = [
    ("schar", 1, True),
    ("short", 2, True),
    ("int", 4, True),
    ("long", 8, True),
    ("llong", 8, True),
    ("uchar", 1, False),
    ("ushort", 2, False),
    ("uint", 4, False),
    ("ulong", 8, False),
    ("ullong", 8, False),
    ("char", 1, True),
    ("wchar", 4, True),
    ("char8", 1, False),
    ("char16", 2, False),
    ("char32", 4, False),
]


def address_seeds():
    seeds = {}
    for index, (name, size, signed) in enumerate(ADDRESS_TYPES):
        bits = 8 * size
        lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
        values = sorted({0, 1, 2, 3, hi, lo} | ({-1, -2} if signed else set()))
        for v in values:
            seeds[f"{name}_{name_of(v)}"] = bytes([index]) + (v % 2**bits).to_bytes(size, "little")
    return seeds


def python_seeds():
    """python_casters.cpp's inputs for the usual objects: a valid (0, address) from a plain class
    and from a look-alike of torch's type with torch's layout (and a `cuda_stream` C getter in
    the base, or none); the fuzzer varies the rest."""

    def shape(torch_like, form, cuda_stream_form, raises):
        return next(
            b
            for b in range(256)
            if (b & 1) == torch_like
            and (b >> 1) % 5 == form
            and (b >> 4) % 4 == cuda_stream_form
            and bool(b & 0x40) == raises
        )

    def int_(kind, v):  # make_value: an int; make_int: kind, then 8 bytes
        return bytes([0, kind]) + i64(v)

    protocol_tuple = bytes([7, 0]) + int_(0, 0) + int_(1, TYPICAL)  # make_value: a tuple of two
    seeds = {}
    for torch_like in (0, 1):
        for cuda_stream_form in (0, 1, 3):
            head = bytes([shape(torch_like, 0, cuda_stream_form, False), 0]) + protocol_tuple + int_(1, TYPICAL)
            head += bytes([0])  # torch's module and qualified name
            if not torch_like:
                seeds[f"plain_cuda_stream{cuda_stream_form}"] = head
                continue
            for getset_form in (0, 1):
                # 4 payload words, three long long members at their own words, read-only, a
                # `cuda_stream` C getter (1: the last word) or none, then the words
                seed = head + bytes([4, 3, 0, 0, 0, 0, 1, 1, 0, 2, 2, getset_form])
                seed += i64(1) + i64(0) + i64(5) + i64(TYPICAL)
                suffix = "_getter" if getset_form else ""
                seeds[f"torch_cuda_stream{cuda_stream_form}{suffix}"] = seed
    return seeds


TARGETS = {
    "python_casters": python_seeds,
    "cuda_stream_protocol": protocol_seeds,
    "dlpack_stream": optional_seeds,
    "cuda_array_interface_stream": optional_seeds,
    "from_address": address_seeds,
}


def expected_files():
    return {pathlib.Path(target) / name: data for target, make in TARGETS.items() for name, data in make().items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the committed corpus instead of writing it")
    args = parser.parse_args()
    want = expected_files()
    have = {p.relative_to(CORPUS): p.read_bytes() for p in CORPUS.rglob("*") if p.is_file()} if CORPUS.is_dir() else {}
    if args.check:
        stale = sorted(str(p) for p in set(want) | set(have) if want.get(p) != have.get(p))
        if stale:
            print("make_corpus: test/fuzz/corpus/ is out of date (run test/fuzz/make_corpus.py): " + ", ".join(stale))
            return 1
        print(f"make_corpus: corpus up to date ({len(want)} seeds)")
        return 0
    for path in set(have) - set(want):
        (CORPUS / path).unlink()
    for path, data in want.items():
        (CORPUS / path).parent.mkdir(parents=True, exist_ok=True)
        (CORPUS / path).write_bytes(data)
    print(f"make_corpus: wrote {len(want)} seeds under {CORPUS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
