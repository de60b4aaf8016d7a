"""The package and the casters read streams with one reader (read_stream.hpp): the package's
`source` is the route the casters' reader reports, and a package StreamView or Stream handed to an
extension module is read by its type, without a Python call, once the module knows the package's C
API (streamlike/c/package_api.h: one capsule with the types, where a view keeps its handle, and the
current-stream table). No GPU: the handles are made up and never used."""

import pytest


class Exporter:
    def __init__(self, address=0x1234):
        self.address = address
        self.calls = 0

    def __cuda_stream__(self):
        self.calls += 1
        return (0, self.address)


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


def test_the_source_is_the_route_the_reader_reports(streamlike, bridge_modules):
    e = Exporter(0x1234)
    view = streamlike.StreamView(e)
    assert view.source == "protocol" and e.calls == 1
    for module in bridge_modules:
        assert module.route_of(e) == ("protocol", 0x1234)
        assert module.route_of(view) == ("streamlike", 0x1234)
    assert streamlike.StreamView(view).source == "streamlike"
    assert streamlike.Stream(e).source == "protocol"


@pytest.mark.parametrize("kind", ["StreamView", "Stream"])
def test_a_package_stream_reaches_every_module_without_a_python_call(streamlike, bridge_modules, kind):
    e = Exporter(0x2468)
    obj = getattr(streamlike, kind)(e)
    with CountingProtocol(getattr(streamlike, kind)) as counter:
        assert obj.__cuda_stream__() == (0, 0x2468) and counter.calls == 1  # the count works
        for module in bridge_modules:
            assert module.route_of(obj) == ("streamlike", 0x2468), module.binding
            assert module.handle_of(obj) == 0x2468  # the stream_view caster
            assert module.handle_of_shared(obj) == 0x2468  # the shared_stream caster
        assert streamlike.StreamView(obj).handle == 0x2468  # and the package's own reader
        assert streamlike.Stream(obj).handle == 0x2468
        assert counter.calls == 1
    assert e.calls == 1  # read once, when obj was made


def test_the_owning_read_of_a_view_holds_it(streamlike, bridge_modules):
    view = streamlike.StreamView(Exporter(0x1357))
    stream = streamlike.Stream(Exporter(0x1357))
    for module in bridge_modules:
        assert module.owning_route_of(view) == ("borrowed", "streamlike", 1)
        how, route, count = module.owning_route_of(stream)
        assert (how, route) == ("shared", "streamlike") and count == stream.use_count + 1


def test_one_capsule_holds_the_package_api(streamlike):
    from streamlike import _streamlike

    assert type(_streamlike._C_API).__name__ == "PyCapsule"
    assert "streamlike._streamlike._C_API" in repr(_streamlike._C_API)
