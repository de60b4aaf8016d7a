# Type stubs for the streamlike package (checked with mypy --strict by test/package).
from types import TracebackType
from typing import Literal, NoReturn, Protocol, final

from ._use import (
    CURRENT as CURRENT,
)
from ._use import (
    CurrentStream as CurrentStream,
)
from ._use import (
    current_stream as current_stream,
)
from ._use import (
    current_stream_check_enabled as current_stream_check_enabled,
)
from ._use import (
    current_stream_conflicts as current_stream_conflicts,
)
from ._use import (
    current_stream_providers as current_stream_providers,
)
from ._use import (
    register_dlpack_exchange_provider as register_dlpack_exchange_provider,
)
from ._use import (
    set_current_stream_check as set_current_stream_check,
)
from ._use import (
    use as use,
)

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

__version__: str

class CudaStreamLike(Protocol):
    """Any object implementing the CUDA Stream Protocol."""

    def __cuda_stream__(self) -> tuple[int, int]: ...

class _CudaStreamOwner(Protocol):
    """An object handing out owning references (docs/owned-stream-abi.md)."""

    def __cuda_stream_owned__(self) -> object: ...

@final
class CaptureInfo:
    """A stream's CUDA graph capture state (a named tuple: status, id)."""

    @property
    def status(self) -> Literal["none", "active", "invalidated"]: ...
    @property
    def id(self) -> int: ...
    def __getitem__(self, index: int) -> str | int: ...
    def __len__(self) -> int: ...

@final
class Event:
    """A CUDA event, made by Stream.record(), StreamView.record() or Event.create()."""

    @staticmethod
    def create(device: int | None = None, timing: bool = False) -> Event: ...
    @property
    def handle(self) -> int: ...
    def record(self, stream: CudaStreamLike) -> None: ...
    def sync(self) -> None: ...
    def is_done(self) -> bool: ...
    def elapsed_ms(self, end: Event) -> float: ...
    def __reduce__(self) -> NoReturn: ...

@final
class GraphExec:
    """An executable CUDA graph, from Graph.instantiate()."""

    @property
    def handle(self) -> int: ...
    def launch(self, stream: CudaStreamLike) -> None: ...
    def upload(self, stream: CudaStreamLike) -> None: ...
    def __reduce__(self) -> NoReturn: ...

@final
class Graph:
    """A CUDA graph, from `with streamlike.capture(stream) as graph:` (filled when the block ends)."""

    @property
    def handle(self) -> int: ...
    @property
    def node_count(self) -> int: ...
    def __bool__(self) -> bool: ...
    def instantiate(self, flags: int = 0) -> GraphExec: ...
    def __reduce__(self) -> NoReturn: ...

@final
class Capture:
    """What capture() returns: a context manager giving the Graph the block records into."""

    def __enter__(self) -> Graph: ...
    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> bool: ...
    def __reduce__(self) -> NoReturn: ...

@final
class StreamView:
    """A non-owning view of any stream object's CUDA stream; keeps the object alive."""

    def __init__(self, obj: CudaStreamLike | _CudaStreamOwner, /) -> None: ...
    @property
    def handle(self) -> int: ...
    @property
    def exporter(self) -> object: ...
    @property
    def source(self) -> str: ...
    @property
    def device(self) -> int: ...
    @property
    def id(self) -> int: ...
    @property
    def priority(self) -> int: ...
    @property
    def flags(self) -> int: ...
    @property
    def is_default(self) -> bool: ...
    @property
    def is_capturing(self) -> bool: ...
    @property
    def capture_info(self) -> CaptureInfo: ...
    @property
    def partition(self) -> PartitionInfo | None:
        """The stream's SM partition: a PartitionInfo for a green-context stream, None for a plain one."""
    def __cuda_stream__(self) -> tuple[int, int]: ...
    def sync(self) -> None: ...
    def is_done(self) -> bool: ...
    def wait(self, other: CudaStreamLike | Event, /) -> None: ...
    def wait_external(self, event: Event, /) -> None: ...
    def record(self, *, timing: bool = False) -> Event: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> NoReturn: ...

@final
class Stream:
    """A CUDA stream shared between Python and C++: Stream.create() or Stream(obj)."""

    def __init__(self, obj: CudaStreamLike | _CudaStreamOwner, /) -> None: ...
    @staticmethod
    def create(
        device: int | None = None, priority: int = 0, non_blocking: bool = True, partition: Partition | None = None
    ) -> Stream: ...
    @property
    def handle(self) -> int: ...
    @property
    def exporter(self) -> object: ...
    @property
    def source(self) -> str: ...
    @property
    def device(self) -> int: ...
    @property
    def id(self) -> int: ...
    @property
    def priority(self) -> int: ...
    @property
    def flags(self) -> int: ...
    @property
    def is_default(self) -> bool: ...
    @property
    def is_capturing(self) -> bool: ...
    @property
    def capture_info(self) -> CaptureInfo: ...
    @property
    def partition(self) -> PartitionInfo | None:
        """The stream's SM partition: a PartitionInfo for a green-context stream, None for a plain one."""
    def __cuda_stream_owned__(self) -> object:
        """A PyCapsule "cuda_stream_owned" holding one owning reference; None if not owning."""
    @property
    def owning(self) -> bool: ...
    @property
    def use_count(self) -> int: ...
    def __cuda_stream__(self) -> tuple[int, int]: ...
    def sync(self) -> None: ...
    def is_done(self) -> bool: ...
    def wait(self, other: CudaStreamLike | Event, /) -> None: ...
    def wait_external(self, event: Event, /) -> None: ...
    def record(self, *, timing: bool = False) -> Event: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> NoReturn: ...

@final
class StreamPool:
    """A fixed set of owning streams on one device, handed out round-robin."""

    def __init__(self, size: int = 16, device: int | None = None) -> None: ...
    def get(self) -> Stream: ...
    def get_for(self, stream: CudaStreamLike) -> Stream:
        """A pooled stream in the same SM partition (green context) as stream; for a plain stream, get()."""
    def get_non_capturing(self) -> Stream: ...
    def at(self, index: int) -> Stream: ...
    def __len__(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def device(self) -> int: ...
    def __reduce__(self) -> NoReturn: ...

@final
class Partition:
    """An SM partition of a device (a CUDA green context), shared; streams made on it keep it alive."""

    @staticmethod
    def create(device: int, sm_count: int) -> Partition: ...
    @staticmethod
    def borrow(green_context: object) -> Partition:
        """Shares a green context someone else owns, never destroying it: a CUgreenCtx address, a
        torch.cuda.green_contexts.GreenContext, a cuda.core green Context, or a stream of it."""
    @property
    def device(self) -> int: ...
    @property
    def sm_count(self) -> int: ...
    @property
    def id(self) -> int: ...
    @property
    def owned(self) -> bool: ...
    @property
    def green_context(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> NoReturn: ...

@final
class PartitionInfo:
    """The partition a stream runs in: green or not, its device, its context's id, its SM count."""

    @property
    def green(self) -> bool: ...
    @property
    def device(self) -> int: ...
    @property
    def context_id(self) -> int: ...
    @property
    def sm_count(self) -> int: ...
    @property
    def green_context(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __reduce__(self) -> NoReturn: ...

def partition_of(stream: CudaStreamLike) -> PartitionInfo:
    """The partition any stream object runs in, green or not; capture-safe driver queries only."""

def wait(consumer: CudaStreamLike, producer: CudaStreamLike | Event, /) -> None:
    """Work queued on consumer from now on waits for producer: a stream's work so far, or an Event.

    While consumer captures a CUDA graph, an Event must have been recorded in the same capture; one
    recorded outside it is refused by name (RuntimeError) and the capture stays active."""

def wait_external(consumer: CudaStreamLike, event: Event, /) -> None:
    """Consumer waits for event as an external wait: in a capture, a graph node that waits, at each
    launch, for whatever event was last recorded on by then; outside a capture, an ordinary wait."""

def capture(stream: CudaStreamLike, mode: Literal["global", "thread_local", "relaxed"] = "global") -> Capture:
    """`with capture(stream) as graph:` records the work queued on stream in the block into graph."""

def retain_until_done(stream: CudaStreamLike, obj: object, /) -> None:
    """Keeps obj alive until the work queued on stream so far is done (or the captured graph is gone)."""

def elapsed_ms(start: Event, end: Event) -> float:
    """Milliseconds between two timed events."""

def from_address(address: int, /) -> StreamView:
    """A raw cudaStream_t address (0: the legacy default stream, 1: legacy, 2: per-thread)."""

def from_dlpack_stream(stream: int | None) -> StreamView | None:
    """The stream a DLPack __dlpack__(stream=...) integer names; None for -1 (no synchronization)."""

def from_cai_stream(stream: int | None) -> StreamView | None:
    """The stream a __cuda_array_interface__ "stream" field names; None for None (no synchronization)."""

def get_include() -> str:
    """The folder holding streamlike/c/owned_stream.h (the owned-stream C ABI), for C and Cython builds."""
