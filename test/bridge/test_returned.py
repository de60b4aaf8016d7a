"""Streams C++ returns to Python: what they implement, what they keep alive, how they come back.

Through the nanobind and pybind11 test modules (fixture `bridge`, conftest.py), with the fake
stream objects of exporters.py: no GPU needed.
"""

import pytest
from exporters import LEGACY, PER_THREAD, Exporter, refcounts

# --- C++ streams returned to Python ---------------------------------------------------------------


def test_returned_shared_stream_implements_the_protocol_and_keeps_the_stream_alive(bridge):
    e = Exporter((0, 0))
    (base,) = refcounts(e)
    s = bridge.pass_through(e)
    assert isinstance(s, bridge.Stream)
    assert type(s).__name__ == "Stream" and type(s).__module__ == "streamlike"
    assert s.__cuda_stream__() == (0, LEGACY)
    assert s.handle == LEGACY
    assert s.owning
    assert refcounts(e) == [base + 1]  # the Python Stream owns the shared_stream, which owns e
    del s
    assert refcounts(e) == [base]


def test_returned_stream_passed_back_shares_its_shared_stream(bridge):
    # A Stream of this module goes back to C++ without a Python call and without a new keep-alive:
    # C++ gets another reference to the same shared_stream.
    e = Exporter((0, 1))
    (base,) = refcounts(e)
    s = bridge.pass_through(e)
    (s_base,) = refcounts(s)
    assert s.use_count == 1
    assert bridge.use_count_of(s) == 2  # s's own + the parameter
    bridge.hold(s)
    assert refcounts(s) == [s_base]  # C++ holds the stream, not the Python wrapper
    assert bridge.held_use_count(0) == 2 and s.use_count == 2
    del s
    assert refcounts(e) == [base + 1]  # still alive: C++ holds it
    bridge.release_held()
    assert refcounts(e) == [base]


def test_returned_stream_is_read_by_a_stream_view_parameter(bridge):
    s = bridge.per_thread_default_stream()
    assert bridge.handle_of(s) == PER_THREAD
    assert bridge.handle_of_shared(s) == PER_THREAD


def test_streams_cross_between_the_two_bindings(bridge):
    # A Stream from the other module gives an owning reference through __cuda_stream_owned__
    # (docs/owned-stream-abi.md): the C++ side shares its stream and keeps no Python object alive.
    from conftest import import_bridge, module_names

    others = [import_bridge(n) for n in module_names() if n != bridge.__name__]
    if not others:
        pytest.skip("only one binding was built")
    other = others[0]
    s = other.pass_through(Exporter((0, 0x1234)))  # a fake handle: no CUDA call on the way
    (base,) = refcounts(s)
    uses = s.use_count
    assert bridge.handle_of(s) == 0x1234
    bridge.hold(s)
    assert refcounts(s) == [base]
    assert s.use_count == uses + 1
    bridge.release_held()
    assert s.use_count == uses


def test_default_streams_are_returned(bridge):
    assert bridge.legacy_default_stream().__cuda_stream__() == (0, LEGACY)
    assert bridge.per_thread_default_stream().__cuda_stream__() == (0, PER_THREAD)
    assert bridge.legacy_default_stream() == bridge.legacy_default_stream()
    assert bridge.legacy_default_stream() != bridge.per_thread_default_stream()
    assert hash(bridge.legacy_default_stream()) == hash(bridge.legacy_default_stream())


def test_empty_shared_stream_is_none(bridge):
    assert bridge.empty_shared_stream() is None
    assert bridge.maybe_shared(False) is None
    assert bridge.maybe_shared(True).handle == LEGACY


def test_returned_view_does_not_own(bridge):
    v = bridge.view_of_address(0x1234)
    assert v.__cuda_stream__() == (0, 0x1234)
    assert not v.owning and v.use_count == 0
    assert "0x1234" in repr(v) and "non-owning" in repr(v)
    # from_address(0) is the calling translation unit's default stream (legacy mode here).
    assert bridge.view_of_address(0).handle == LEGACY
    assert bridge.handle_of(v) == 0x1234


def test_stream_objects_are_made_by_cpp_only(bridge):
    with pytest.raises(TypeError):
        bridge.Stream()


def test_returned_stream_satisfies_a_protocol_consumer(bridge):
    # What cuda.core's _handle_from_stream_protocol does with an object.
    s = bridge.legacy_default_stream()
    attr = s.__cuda_stream__
    assert callable(attr)
    info = attr()
    assert isinstance(info, tuple) and len(info) == 2 and info[0] == 0
    assert isinstance(info[1], int)
