"""The current stream across frameworks, in Python (docs/current-stream.md).

current_stream(), use, current_stream_providers, current_stream_conflicts, the check's switch and
register_dlpack_exchange_provider come from the extension module; this file adds CURRENT, the
sentinel a stream argument of a function bound with streamlike's casters
(streamlike::python::stream_or_current) takes to mean "the caller's current stream", as None does.
"""

from ._cupy_watch import watch as _watch_for_cupy
from ._streamlike import (
    current_stream,
    current_stream_check_enabled,
    current_stream_conflicts,
    current_stream_providers,
    register_dlpack_exchange_provider,
    set_current_stream_check,
    use,
)

_watch_for_cupy()


class CurrentStream:
    """The type of streamlike.CURRENT (one instance). The casters recognize it by this attribute."""

    __streamlike_current_stream__ = True
    __slots__ = ()

    def __repr__(self) -> str:
        return "streamlike.CURRENT"

    def __reduce__(self) -> str:
        return "CURRENT"


CURRENT = CurrentStream()

__all__ = [
    "CURRENT",
    "CurrentStream",
    "current_stream",
    "current_stream_check_enabled",
    "current_stream_conflicts",
    "current_stream_providers",
    "register_dlpack_exchange_provider",
    "set_current_stream_check",
    "use",
]
