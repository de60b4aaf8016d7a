"""A program using streamlike's API as a library would; test_install.py checks it with mypy --strict."""

import streamlike
from streamlike import Event, Stream, StreamPool, StreamView


class MyStream:
    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, 0x1234)


def launch(stream: streamlike.CudaStreamLike) -> int:
    view = StreamView(stream)
    facts: tuple[int, int, int, int, bool, bool] = (
        view.device,
        view.id,
        view.priority,
        view.flags,
        view.is_default,
        view.is_capturing,
    )
    source: str = view.source
    exporter: object = view.exporter
    print(facts, source, exporter)
    return view.handle


def owning() -> Stream:
    s = Stream.create(device=0, priority=-1, non_blocking=False)
    shared = Stream(MyStream())
    s.wait(shared)
    s.wait(StreamView(shared))
    start: Event = s.record(timing=True)
    end = s.record(timing=True)
    end.sync()
    ms: float = start.elapsed_ms(end)
    done: bool = end.is_done() and s.is_done()
    print(ms, done, s.owning, s.use_count, s.__cuda_stream__(), s.__cuda_stream_owned__())
    streamlike.wait(s, shared)
    streamlike.wait(s, end)
    s.wait(end)
    StreamView(s).wait(start)
    streamlike.wait_external(s, end)
    s.wait_external(end)
    StreamView(shared).wait_external(start)
    return s


class OnlyOwned:
    def __init__(self, stream: Stream) -> None:
        self.stream = stream

    def __cuda_stream_owned__(self) -> object:
        return self.stream.__cuda_stream_owned__()


def from_capsule(s: Stream) -> tuple[Stream, StreamView]:
    return Stream(OnlyOwned(s)), StreamView(OnlyOwned(s))


def pooled() -> Stream:
    pool = StreamPool(4, device=None)
    n: int = len(pool) + pool.size + pool.device
    print(n)
    return pool.get()


def captured(s: Stream) -> float:
    info = s.capture_info
    status: str = info.status
    print(status, info.id, StreamView(s).capture_info.status)
    with streamlike.capture(s, mode="relaxed") as graph:
        s.wait(StreamView(s))
    exec_graph = graph.instantiate()
    exec_graph.upload(s)
    exec_graph.launch(s)
    streamlike.retain_until_done(s, [graph.node_count, graph.handle, exec_graph.handle])
    start = Event.create(device=None, timing=True)
    start.record(s)
    end = s.record(timing=True)
    return streamlike.elapsed_ms(start, end)


def decoded() -> list[StreamView | None]:
    return [streamlike.from_dlpack_stream(None), streamlike.from_cai_stream(2), streamlike.from_address(0)]


if __name__ == "__main__":
    print(launch(MyStream()), launch(owning()), pooled(), decoded(), captured(owning()))
