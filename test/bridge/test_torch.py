"""Known exporters: torch's handle read without running its Python method, and what the reader
remembers of each type.

Through the nanobind and pybind11 test modules (fixture `bridge`, conftest.py), with the fake
stream objects of exporters.py: no GPU needed.
"""

import os
import subprocess
import sys
import textwrap

import pytest
from exporters import LEGACY, PER_THREAD, fake_torch_stream_class, refcounts

# --- known exporters: torch's handle read without running its Python method ----------------------


def test_torch_streams_are_read_without_calling_the_method(bridge):
    Stream, calls = fake_torch_stream_class()
    assert bridge.handle_of(Stream(0x1234)) == 0x1234
    assert bridge.handle_of(Stream(0)) == LEGACY  # same rules as the protocol: 0 is legacy
    assert bridge.handle_of_shared(Stream(2)) == PER_THREAD
    s = Stream(1)
    (base,) = refcounts(s)
    bridge.hold(s)  # and a shared_stream still keeps the object alive
    assert refcounts(s) == [base + 1]
    bridge.release_held()
    assert calls == []  # never ran: the handle came from `cuda_stream`
    with pytest.raises(ValueError, match="negative stream address -3"):
        bridge.handle_of(Stream(-3))  # the same checks as through the protocol


def test_torch_fast_path_follows_changes_to_the_class(bridge):
    Stream, calls = fake_torch_stream_class()
    assert bridge.handle_of(Stream(0x10)) == 0x10 and calls == []
    # Replacing the method on the class: it is no longer torch's, so it must run.
    Stream.__cuda_stream__ = lambda self: (0, 0x20)
    assert bridge.handle_of(Stream(0x10)) == 0x20

    Stream, calls = fake_torch_stream_class()

    class Overriding(Stream):
        def __cuda_stream__(self):
            return (0, 0x30)

    assert bridge.handle_of(Overriding(0x10)) == 0x30  # a subclass's own method is not torch's
    assert bridge.handle_of(Stream(0x10)) == 0x10 and calls == []


def keyed_torch_stream_class(bridge):
    """Like fake_torch_stream_class, over a C base that publishes torch's key for a stream
    (read-only long long members device_type, device_index, stream_id) as torch's does."""
    Stream, calls = fake_torch_stream_class()

    class KeyedStream(bridge.FakeTorchStreamBase):
        __cuda_stream__ = Stream.__cuda_stream__  # torch's method

    return KeyedStream, calls


def test_torch_handles_are_remembered_by_the_streams_key(bridge):
    Stream, calls = keyed_torch_stream_class(bridge)
    reads = bridge.fake_torch_reads()
    s = Stream(stream_id=5, device_index=0, handle=0x5000)
    (base,) = refcounts(s)
    assert [bridge.handle_of(s) for _ in range(3)] == [0x5000] * 3
    assert bridge.handle_of_shared(s) == 0x5000
    assert bridge.fake_torch_reads() == reads + 1  # read once
    # A new object for the same stream (torch.cuda.current_stream() makes one per call): no read.
    assert bridge.handle_of(Stream(stream_id=5, device_index=0, handle=0x5000)) == 0x5000
    assert bridge.fake_torch_reads() == reads + 1
    # Another device or another stream id is another stream: read.
    assert bridge.handle_of(Stream(stream_id=5, device_index=1, handle=0x6000)) == 0x6000
    assert bridge.handle_of(Stream(stream_id=6, device_index=0, handle=0x7000)) == 0x7000
    assert bridge.fake_torch_reads() == reads + 3
    assert refcounts(s) == [base]  # the cache holds integers, no object
    assert calls == []


def test_torch_handle_cache_keeps_every_stream_apart(bridge):
    # More streams than the cache remembers, in turn: each gives its own handle every time.
    Stream, _ = keyed_torch_stream_class(bridge)
    streams = [Stream(stream_id=100 + i, device_index=i % 2, handle=0x10000 + i) for i in range(20)]
    for _ in range(3):
        assert [bridge.handle_of(s) for s in streams] == [0x10000 + i for i in range(20)]


def test_torch_handle_cache_remembers_only_valid_handles(bridge):
    Stream, _ = keyed_torch_stream_class(bridge)
    s = Stream(stream_id=7, device_index=0, handle=-3)
    for _ in range(2):  # checked (and refused) each time: a refused handle is not remembered
        with pytest.raises(ValueError, match="negative stream address -3"):
            bridge.handle_of(s)


def test_torch_streams_without_a_published_key_are_read_every_time(bridge):
    Stream, calls = fake_torch_stream_class()  # `cuda_stream` only: no key members
    s = Stream(0x60)
    assert [bridge.handle_of(s) for _ in range(3)] == [0x60] * 3
    assert Stream.reads == 3 and calls == []


def test_torch_fast_path_falls_back_to_the_method(bridge):
    # `cuda_stream` that is not an int: the method runs, and its result is what counts.
    Stream, calls = fake_torch_stream_class()
    with pytest.raises(TypeError, match="stream address of type 'str'"):
        bridge.handle_of(Stream("0x10"))
    assert len(calls) == 1


def reader_words(bridge, obj):
    """How the casters read obj (fake_torch_stream.hpp, reader_of)."""
    return set(filter(None, bridge.reader_of(obj).split(",")))


def test_torch_cuda_stream_getter_is_called_without_a_lookup(bridge):
    Stream, calls = keyed_torch_stream_class(bridge)
    reads = bridge.fake_torch_reads()
    s = Stream(stream_id=300, device_index=0, handle=0x30000)
    assert bridge.handle_of(s) == 0x30000 and bridge.fake_torch_reads() == reads + 1
    assert {"torch", "key", "getter"} <= reader_words(bridge, s)
    # An instance's __dict__ does not shadow a getset (a data descriptor), for the lookup either.
    t = Stream(stream_id=301, device_index=0, handle=0x30100)
    t.__dict__["cuda_stream"] = 0x666
    assert t.cuda_stream == 0x30100
    assert bridge.handle_of_shared(t) == 0x30100
    assert calls == []


def test_torch_cuda_stream_that_is_not_a_getter_is_looked_up(bridge):
    Stream, calls = keyed_torch_stream_class(bridge)

    class PropertyStream(Stream):
        cuda_stream = property(lambda self: self.stream_id * 0x100)  # shadows the base's getset

    s = PropertyStream(stream_id=310, device_index=0, handle=1)
    assert bridge.handle_of(s) == 310 * 0x100
    assert "getter" not in reader_words(bridge, s) and "torch" in reader_words(bridge, s)

    class Intercepting(Stream):
        def __getattribute__(self, name):
            if name == "cuda_stream":
                return 0x4400
            return super().__getattribute__(name)

    i = Intercepting(stream_id=311, device_index=0, handle=1)
    assert bridge.handle_of(i) == 0x4400  # the class's own lookup answers
    assert "getter" not in reader_words(bridge, i)

    class Planted(Stream):
        cuda_stream = int.__dict__["real"]  # a getset of another type: refuses this object

    p = Planted(stream_id=312, device_index=0, handle=1)
    assert "getter" not in reader_words(bridge, p)
    with pytest.raises(TypeError, match="doesn't apply to a 'Planted' object"):
        bridge.handle_of(p)  # the method ran, and its own lookup raised
    assert calls == [p]


def test_torch_member_planted_from_another_type_is_not_a_key(bridge):
    # Read-only long long members, but of another type's layout: not read from this object.
    Stream, _ = fake_torch_stream_class()
    Base = bridge.FakeTorchStreamBase

    class Planted(Stream):
        device_type = Base.__dict__["device_type"]
        device_index = Base.__dict__["device_index"]
        stream_id = Base.__dict__["stream_id"]

    p = Planted(0x70)
    assert reader_words(bridge, p) >= {"torch"} and "key" not in reader_words(bridge, p)
    assert [bridge.handle_of(p) for _ in range(3)] == [0x70] * 3
    assert Planted.reads == 3


def test_torch_cuda_stream_getter_that_raises_falls_back_to_the_method(bridge):
    Stream, calls = keyed_torch_stream_class(bridge)
    s = Stream(stream_id=-1, device_index=0, handle=0x1)  # the fake's getter raises for stream_id -1
    (base,) = refcounts(s)
    for read in (bridge.handle_of, bridge.handle_of_shared):
        with pytest.raises(RuntimeError, match="cuda_stream failed"):
            read(s)  # the getter raised, the method ran and raised the same, which propagates
    assert calls == [s, s]
    del calls[:]
    assert refcounts(s) == [base]


def test_torch_cuda_stream_getter_follows_changes_to_the_class(bridge):
    Stream, calls = keyed_torch_stream_class(bridge)
    assert bridge.handle_of(Stream(stream_id=320, device_index=0, handle=0x32000)) == 0x32000
    # A property set on the class after first use replaces the getter for its objects.
    Stream.cuda_stream = property(lambda self: 0x4500)
    s = Stream(stream_id=321, device_index=0, handle=0x32100)
    assert "getter" not in reader_words(bridge, s)
    assert bridge.handle_of(s) == 0x4500
    del Stream.cuda_stream  # the base's getter again
    s = Stream(stream_id=322, device_index=0, handle=0x32200)
    assert bridge.handle_of_shared(s) == 0x32200 and "getter" in reader_words(bridge, s)

    # An object whose class is assigned is read as its new class reads.
    class Other(bridge.FakeTorchStreamBase):
        __cuda_stream__ = Stream.__cuda_stream__
        cuda_stream = property(lambda self: 0x4600)

    t = Stream(stream_id=323, device_index=0, handle=0x32300)
    assert "getter" in reader_words(bridge, t)
    t.__class__ = Other
    assert bridge.handle_of(t) == 0x4600 and "getter" not in reader_words(bridge, t)
    assert calls == []


def test_reader_remembers_whether_a_type_offers_cuda_stream_owned(bridge):
    class Exporter:
        def __cuda_stream__(self):
            return (0, 0x50)

    e = Exporter()
    assert bridge.handle_of_shared(e) == 0x50
    assert "no-owned" in reader_words(bridge, e)
    offered = []

    def __cuda_stream_owned__(self):
        offered.append(self)
        return None  # declines: the object is kept alive instead

    Exporter.__cuda_stream_owned__ = __cuda_stream_owned__  # added after first use: seen
    assert bridge.handle_of_shared(e) == 0x50 and offered == [e]
    assert "no-owned" not in reader_words(bridge, e)


def test_protocol_only_switch(bridge):
    # STREAMLIKE_PYTHON_PROTOCOL_ONLY=1 turns the fast path off: the method always runs.
    script = textwrap.dedent(f"""
        import {bridge.__name__} as m
        from exporters import fake_torch_stream_class
        Stream, calls = fake_torch_stream_class()
        assert m.handle_of(Stream(0x40)) == 0x40
        print(len(calls))
    """)
    env = dict(os.environ, STREAMLIKE_PYTHON_PROTOCOL_ONLY="1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.abspath(__file__))] + [p for p in sys.path if p])
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1"
