#!/usr/bin/env python3
"""Finds a third-party package the adapter tests build against; prints KEY=VALUE lines.

Usage: locate.py {cccl,rmm,torch,xla_ffi,tvm_ffi} SOURCE_ROOT

Exit status 0 with the lines below when found, 1 (with the reason on stderr) when not.
  cccl:  include=DIR                  a CCCL newer than the toolkit's
  rmm:   include=DIR (RMM, then the CCCL it ships), libdir=DIR (librmm.so, librapids_logger.so)
  torch: include=DIR..., libdir=DIR   torch's C++ headers and libc10*.so
  xla_ffi: include=DIR                XLA's FFI headers (DIR/xla/ffi/api/ffi.h)
  tvm_ffi: include=DIR, libdir=DIR    tvm-ffi's C++ headers (and DLPack's), libtvm_ffi.so
This is the one place that decides where each is looked for (the root meson.build asks it once for
the newer CCCL, unless -Dcccl_include_dir names one; scripts/setup unpacks into .deps/), first hit wins:
  cccl:  $STREAMLIKE_NEWER_CCCL; SOURCE_ROOT/.deps/cccl/include (scripts/setup unpacks the
         cuda-cccl wheel there); the cuda-cccl Python package (cuda/cccl/headers/include)
  rmm:   $STREAMLIKE_RMM_ROOT (the librmm package folder); SOURCE_ROOT/.deps/librmm (scripts/setup);
         the librmm Python package. rapids_logger likewise ($STREAMLIKE_RAPIDS_LOGGER_ROOT,
         .deps/rapids_logger, the rapids_logger package)
  torch: the torch Python package (torch.utils.cpp_extension), imported by this interpreter
  xla_ffi: $STREAMLIKE_XLA_FFI_INCLUDE; the jaxlib package's include/ (what jax.ffi.include_dir()
         names)
  tvm_ffi: $STREAMLIKE_TVM_FFI_ROOT (the tvm_ffi package folder, e.g. unpacked from the wheel in
         .deps/wheels); the tvm_ffi Python package (its include/ and lib/, what tvm_ffi.libinfo names)
Python packages are located with importlib.util.find_spec, which does not import them (importing
cuda.cccl would demand cuda.bindings), except torch, whose paths only torch can tell.
"""

import importlib.util
import os
import sys
from pathlib import Path


def package_dir(name):
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def first_dir(candidates):
    for c in candidates:
        if c and Path(c).is_dir():
            return Path(c)
    return None


def locate_cccl(root):
    pip_headers = package_dir("cuda.cccl")
    found = first_dir(
        [
            os.environ.get("STREAMLIKE_NEWER_CCCL"),
            root / ".deps" / "cccl" / "include",
            pip_headers / "headers" / "include" if pip_headers else None,
        ]
    )
    if found is None or not (found / "cuda" / "std" / "version").is_file():
        return None, "no newer CCCL (set STREAMLIKE_NEWER_CCCL, run scripts/setup, or pip install cuda-cccl)"
    return [f"include={found}"], None


def locate_librmm_like(root, env, folder, package):
    return first_dir([os.environ.get(env), root / ".deps" / folder, package_dir(package)])


def locate_rmm(root):
    rmm = locate_librmm_like(root, "STREAMLIKE_RMM_ROOT", "librmm", "librmm")
    if rmm is None or not (rmm / "include" / "rmm" / "cuda_stream.hpp").is_file():
        return None, "no RMM headers (run scripts/setup, pip install librmm-cu13, or set STREAMLIKE_RMM_ROOT)"
    logger = locate_librmm_like(root, "STREAMLIKE_RAPIDS_LOGGER_ROOT", "rapids_logger", "rapids_logger")
    if logger is None or not (logger / "lib64" / "librapids_logger.so").is_file():
        return None, f"RMM found at {rmm} but not rapids_logger, which librmm.so needs"
    lines = [f"include={rmm / 'include'}"]
    # RMM needs a newer CCCL than CUDA 13.0's and ships the one it was built with.
    if (rmm / "include" / "rapids" / "cuda").is_dir():
        lines.append(f"include={rmm / 'include' / 'rapids'}")
    lines += [f"libdir={rmm / 'lib64'}", f"libdir={logger / 'lib64'}"]
    return lines, None


def locate_torch(_root):
    if package_dir("torch") is None:
        return None, f"torch is not importable by {sys.executable}"
    try:
        from torch.utils import cpp_extension
    except Exception as e:  # a broken torch install: report, do not crash the configure step
        return None, f"import torch failed: {e}"
    lines = [f"include={d}" for d in cpp_extension.include_paths()]
    lines += [f"libdir={d}" for d in cpp_extension.library_paths()]
    return lines, None


def locate_xla_ffi(_root):
    jaxlib = package_dir("jaxlib")
    found = first_dir(
        [
            os.environ.get("STREAMLIKE_XLA_FFI_INCLUDE"),
            jaxlib / "include" if jaxlib else None,
        ]
    )
    if found is None or not (found / "xla" / "ffi" / "api" / "ffi.h").is_file():
        return None, (
            f"no XLA FFI headers (jaxlib is not importable by {sys.executable}; "
            "pip install jax, or set STREAMLIKE_XLA_FFI_INCLUDE to the folder holding xla/ffi/api/ffi.h)"
        )
    return [f"include={found}"], None


def locate_tvm_ffi(_root):
    found = first_dir([os.environ.get("STREAMLIKE_TVM_FFI_ROOT"), package_dir("tvm_ffi")])
    if found is None or not (found / "include" / "tvm" / "ffi" / "function.h").is_file():
        return None, (
            f"no tvm-ffi headers (tvm_ffi is not importable by {sys.executable}; pip install apache-tvm-ffi "
            "from .deps/wheels, or set STREAMLIKE_TVM_FFI_ROOT to the tvm_ffi package folder)"
        )
    if not (found / "lib" / "libtvm_ffi.so").is_file():
        return None, f"tvm-ffi headers found in {found} but not lib/libtvm_ffi.so"
    return [f"include={found / 'include'}", f"libdir={found / 'lib'}"], None


LOCATORS = {
    "cccl": locate_cccl,
    "rmm": locate_rmm,
    "torch": locate_torch,
    "xla_ffi": locate_xla_ffi,
    "tvm_ffi": locate_tvm_ffi,
}


def main(argv):
    if len(argv) != 3 or argv[1] not in LOCATORS:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[2])
    lines, why = LOCATORS[argv[1]](root)
    if lines is None:
        print(why, file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
