# Type stubs for the current stream across frameworks (docs/current-stream.md).
from types import TracebackType
from typing import Protocol, final

from . import StreamView

class _CudaStreamLike(Protocol):
    def __cuda_stream__(self) -> tuple[int, int]: ...

@final
class CurrentStream:
    """The type of streamlike.CURRENT: a stream argument meaning the caller's current stream."""

    __streamlike_current_stream__: bool

CURRENT: CurrentStream

def current_stream(device: int | None = None) -> StreamView:
    """The calling thread's current stream on `device` (default: the current device)."""

@final
class use:
    """with streamlike.use(stream, device=None): current in streamlike, torch, tvm-ffi and CuPy."""

    def __init__(self, stream: _CudaStreamLike, device: int | None = None) -> None: ...
    def __enter__(self) -> use: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...
    @property
    def stream(self) -> _CudaStreamLike: ...
    @property
    def device(self) -> int | None: ...

def current_stream_providers() -> list[str]: ...
def register_dlpack_exchange_provider(tensor_type: object, name: str | None = None) -> str:
    """A read-only provider over `tensor_type`'s DLPack C exchange API (current_work_stream)."""

def current_stream_conflicts(device: int | None = None) -> list[tuple[str, StreamView]]: ...
def set_current_stream_check(on: bool) -> None: ...
def current_stream_check_enabled() -> bool: ...
