"""Misuse of streamlike's API that mypy --strict must report through the stubs (one per marked line)."""

import streamlike
from streamlike import Stream, StreamView

StreamView(5)  # error: an int is not a stream
Stream.create(device="0")  # error: a device is an int
Stream.create(non_blocking=1.5)  # error: a bool
handle: str = StreamView(Stream.create()).handle  # error: handle is an int
streamlike.wait(Stream.create())  # error: two streams
Stream.create().record(True)  # error: timing is keyword-only
view: StreamView = streamlike.from_cai_stream(5)  # error: may be None
streamlike.capture(Stream.create(), mode="local")  # error: not a capture mode
streamlike.retain_until_done(Stream.create())  # error: the object to keep is missing
streamlike.wait_external(Stream.create(), Stream.create())  # error: waits for an Event, not a stream
StreamView(Stream.create()).wait_external(Stream.create())  # error: an Event
streamlike.wait(Stream.create().record(), Stream.create())  # error: the consumer is a stream
