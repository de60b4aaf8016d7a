"""The one reader and the one owning read of the casters (read_stream.hpp, read_owning_stream.hpp):
which way each kind of stream object is read, and how often that runs Python code.

Through the nanobind and pybind11 test modules (fixture `bridge`, conftest.py): route_of(obj) is
the reader's (route, handle), owning_route_of(obj) the owning read's (how, route, use_count). The
package's StreamView, read by these modules without a Python call, is checked where the package is
installed (test/package/test_bridge_routes.py).
"""

import pytest
from exporters import LEGACY, Exporter, NotAStream, fake_torch_stream_class


class CountingProtocol:
    """Replaces `cls.__cuda_stream__` by a wrapper that counts its calls, for the block's length."""

    def __init__(self, cls):
        self.cls = cls
        self.calls = 0

    def __enter__(self):
        self.original = self.cls.__dict__["__cuda_stream__"]
        original = self.original

        def __cuda_stream__(obj):
            self.calls += 1
            return original(obj)

        self.cls.__cuda_stream__ = __cuda_stream__
        return self

    def __exit__(self, *exc):
        self.cls.__cuda_stream__ = self.original


def test_a_protocol_object_is_read_by_calling_its_method(bridge):
    e = Exporter((0, 0x1234))
    assert bridge.route_of(e) == ("protocol", 0x1234)
    assert e.calls == 1
    assert bridge.route_of(e) == ("protocol", 0x1234)
    assert e.calls == 2  # every read calls it: nothing is remembered of a protocol object
    assert bridge.route_of(Exporter((0, 0))) == ("protocol", LEGACY)


def test_a_torch_stream_is_read_without_its_method(bridge):
    Stream, calls = fake_torch_stream_class()
    assert bridge.route_of(Stream(0x5678)) == ("torch", 0x5678)
    assert calls == []


def test_a_stream_of_the_module_is_read_without_a_python_call(bridge):
    owning = bridge.pass_through(bridge.legacy_default_stream())
    view = bridge.view_of_address(0x4321)  # a non-owning Stream
    assert type(owning) is bridge.Stream and type(view) is bridge.Stream
    with CountingProtocol(bridge.Stream) as counter:
        assert view.__cuda_stream__() == (0, 0x4321) and counter.calls == 1  # the count works
        assert bridge.route_of(view) == ("streamlike", 0x4321)
        assert bridge.route_of(owning) == ("streamlike", LEGACY)
        assert bridge.handle_of(view) == 0x4321  # the caster is the same reader
        assert bridge.handle_of_shared(view) == 0x4321
        assert counter.calls == 1


def test_a_reading_error_names_the_object(bridge):
    with pytest.raises(TypeError, match="NotAStream"):
        bridge.route_of(NotAStream())
    with pytest.raises(ValueError, match="protocol version 1"):
        bridge.route_of(Exporter((1, 0x10)))


def test_the_owning_read_shares_an_owning_stream(bridge):
    s = bridge.pass_through(bridge.legacy_default_stream())
    assert bridge.owning_route_of(s)[:2] == ("shared", "streamlike")
    e = Exporter((0, 0x1234))
    held = bridge.pass_through(e)  # an owning Stream holding e
    assert e.calls == 1
    assert bridge.owning_route_of(held) == ("shared", "streamlike", 2)  # held's owner and the read's
    assert e.calls == 1


def test_the_owning_read_holds_what_it_cannot_own(bridge):
    e = Exporter((0, 0x1234))
    assert bridge.owning_route_of(e) == ("borrowed", "protocol", 1)
    assert e.calls == 1
    Stream, calls = fake_torch_stream_class()
    assert bridge.owning_route_of(Stream(0x5678)) == ("borrowed", "torch", 1)
    assert calls == []
    view = bridge.view_of_address(0x4321)  # a non-owning Stream: nothing to own
    with CountingProtocol(bridge.Stream) as counter:
        assert bridge.owning_route_of(view) == ("borrowed", "streamlike", 1)
        assert counter.calls == 0


def test_the_owning_read_takes_an_owning_reference(bridge):
    held = bridge.pass_through(Exporter((0, 0x1234)))

    class Offers:
        def __init__(self):
            self.calls = 0

        def __cuda_stream_owned__(self):
            self.calls += 1
            return held.__cuda_stream_owned__()

        def __cuda_stream__(self):
            raise AssertionError("an object that offers an owning reference is not read through the protocol")

    offers = Offers()
    how, _, _ = bridge.owning_route_of(offers)
    assert how == "owned-capsule" and offers.calls == 1
