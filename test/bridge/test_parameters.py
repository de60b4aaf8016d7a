"""Optional stream parameters, and streams nested in containers.

Through the nanobind and pybind11 test modules (fixture `bridge`, conftest.py), with the fake
stream objects of exporters.py: no GPU needed.
"""

import pytest
from exporters import LEGACY, Boom, Exporter, FreshRaisingExporter, refcounts, swallow

# --- optional parameters --------------------------------------------------------------------------


def test_optional_stream_parameters(bridge):
    assert bridge.handle_of_optional(None) is None
    assert bridge.handle_of_optional(Exporter((0, 0x99))) == 0x99
    assert bridge.handle_of_optional_shared(None) is None
    e = Exporter((0, 0))
    (base,) = refcounts(e)
    assert bridge.handle_of_optional_shared(e) == LEGACY
    assert refcounts(e) == [base]
    with pytest.raises(TypeError, match="A Python int is not a stream"):
        bridge.handle_of_optional(7)


# --- streams nested in containers -----------------------------------------------------------------


def test_streams_in_a_list(bridge):
    assert bridge.handles_of([Exporter((0, 5)), Exporter((0, 0)), bridge.legacy_default_stream()]) == [
        5,
        LEGACY,
        LEGACY,
    ]


def test_errors_in_a_list_never_crash_nor_leak(bridge):
    # nanobind calls element casters from noexcept code, so there the error cannot propagate as
    # itself: the element just does not match (nanobind's TypeError). pybind11 propagates it.
    nanobind = bridge.binding == "nanobind"
    cases = [
        ([Exporter((0, 5)), Exporter((1, 5))], TypeError if nanobind else ValueError),
        ([FreshRaisingExporter()], TypeError if nanobind else Boom),
        ([7], TypeError),
    ]
    for streams, expected in cases:
        before = refcounts(*streams)
        for _ in range(20):
            swallow(expected, bridge.handles_of, streams)
        after = refcounts(*streams)
        assert after == before
