"""streamlike: CUDA streams shared between Python libraries and C++ (docs/python-package.md).

StreamView(obj) reads any stream object (torch, CuPy, cuda.core, numba-cuda, anything with
__cuda_stream__) without owning it; Stream owns a stream shared with C++ extension modules built
on streamlike's casters, which return this same Stream type.
"""

import os
from importlib import metadata as _metadata
from typing import Protocol, runtime_checkable

from ._streamlike import (
    Capture,
    CaptureInfo,
    Event,
    Graph,
    GraphExec,
    Partition,
    PartitionInfo,
    Stream,
    StreamPool,
    StreamView,
    capture,
    elapsed_ms,
    from_address,
    from_cai_stream,
    from_dlpack_stream,
    partition_of,
    retain_until_done,
    wait,
    wait_external,
)
from ._use import (
    CURRENT,
    CurrentStream,
    current_stream,
    current_stream_check_enabled,
    current_stream_conflicts,
    current_stream_providers,
    register_dlpack_exchange_provider,
    set_current_stream_check,
    use,
)


def _installed_version() -> str:
    # The installed distribution's version (meson.build's): `pip install .` installs streamlike,
    # the binary wheels streamlike-cu13 or streamlike-cu12 (docs/python-package.md, "Binary wheels").
    for distribution in ("streamlike", "streamlike-cu13", "streamlike-cu12"):
        try:
            return _metadata.version(distribution)
        except _metadata.PackageNotFoundError:
            pass
    return "0+unknown"  # imported from a build tree, not installed


__version__: str = _installed_version()


@runtime_checkable
class CudaStreamLike(Protocol):
    """Any object implementing the CUDA Stream Protocol (what StreamView and Stream accept)."""

    def __cuda_stream__(self) -> tuple[int, int]: ...


def get_include() -> str:
    """The folder holding streamlike/c/owned_stream.h (the owned-stream C ABI), for C and Cython builds."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")


__all__ = [
    "CURRENT",
    "Capture",
    "CaptureInfo",
    "CudaStreamLike",
    "CurrentStream",
    "Event",
    "Graph",
    "GraphExec",
    "Partition",
    "PartitionInfo",
    "Stream",
    "StreamPool",
    "StreamView",
    "capture",
    "current_stream",
    "current_stream_check_enabled",
    "current_stream_conflicts",
    "current_stream_providers",
    "elapsed_ms",
    "from_address",
    "from_cai_stream",
    "from_dlpack_stream",
    "get_include",
    "partition_of",
    "register_dlpack_exchange_provider",
    "retain_until_done",
    "set_current_stream_check",
    "use",
    "wait",
    "wait_external",
]
