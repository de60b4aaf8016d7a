"""Every bad input to the package: what was given and what was expected, in each message."""

import pytest
from package_exporters import Exporter


class RaisesInside:
    def __cuda_stream__(self):
        raise KeyError("raised by the exporter itself")


def returns(value):
    class Returns:
        def __cuda_stream__(self):
            return value

    return Returns()


BAD_STREAMS = [
    # (argument, exception, words the message must hold)
    (5, TypeError, ["'int'", "__cuda_stream__", "not a stream"]),
    (None, TypeError, ["'NoneType'", "__cuda_stream__"]),
    ("x", TypeError, ["'str'", "__cuda_stream__"]),
    (1.5, TypeError, ["'float'"]),
    (returns(7), TypeError, ["Returns.__cuda_stream__", "sequence of 2", "'int'"]),
    (returns((0, 1, 2)), ValueError, ["Returns.__cuda_stream__", "3 element"]),
    (returns((1, 5)), ValueError, ["protocol version 1", "only version 0"]),
    (returns((0, -5)), ValueError, ["negative stream address -5"]),
    (returns((0, "a")), TypeError, ["stream address of type 'str'", "expected an int"]),
    (returns(("v", 5)), TypeError, ["version of type 'str'"]),
    (returns((0, 2**64)), ValueError, ["beyond 2**63 - 1"]),
]


@pytest.mark.parametrize(
    "make", ["StreamView", "Stream", "wait-consumer", "wait-producer", "method-wait", "wait_external-consumer"]
)
@pytest.mark.parametrize("arg,exc,words", BAD_STREAMS, ids=[repr(b[0])[:30] for b in BAD_STREAMS])
def test_bad_stream_arguments_name_what_was_given_and_what_was_expected(streamlike, make, arg, exc, words):
    good = streamlike.StreamView(Exporter(0x10))
    call = {
        "StreamView": lambda: streamlike.StreamView(arg),
        "Stream": lambda: streamlike.Stream(arg),
        "wait-consumer": lambda: streamlike.wait(arg, good),
        "wait-producer": lambda: streamlike.wait(good, arg),
        "method-wait": lambda: good.wait(arg),
        "wait_external-consumer": lambda: streamlike.wait_external(arg, object()),  # the consumer is read first
    }[make]
    with pytest.raises(exc) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_an_exception_inside_the_exporter_propagates_unchanged(streamlike):
    with pytest.raises(KeyError, match="raised by the exporter itself"):
        streamlike.StreamView(RaisesInside())
    with pytest.raises(KeyError, match="raised by the exporter itself"):
        streamlike.Stream(RaisesInside())


BAD_CALLS = [
    ("StreamView()", lambda s: s.StreamView(), TypeError, ["exactly one positional argument", "got 0"]),
    ("StreamView(a, b)", lambda s: s.StreamView(Exporter(), Exporter()), TypeError, ["exactly one", "got 2"]),
    ("StreamView(obj=)", lambda s: s.StreamView(obj=Exporter()), TypeError, ["exactly one", "1 keyword"]),
    ("Stream()", lambda s: s.Stream(), TypeError, ["exactly one positional argument", "Stream.create()"]),
    ("create(device='0')", lambda s: s.Stream.create(device="0"), TypeError, ["device must be None", "'str'"]),
    ("create(device=True)", lambda s: s.Stream.create(device=True), TypeError, ["device", "'bool'"]),
    ("create(device=-1)", lambda s: s.Stream.create(device=-1), ValueError, ["device ordinal >= 0", "-1"]),
    (
        "create(priority=1.5)",
        lambda s: s.Stream.create(priority=1.5),
        TypeError,
        ["priority must be an int", "'float'"],
    ),
    ("create(priority=2**40)", lambda s: s.Stream.create(priority=2**40), ValueError, ["priority", "out of range"]),
    ("create(non_blocking=1)", lambda s: s.Stream.create(non_blocking=1), TypeError, ["non_blocking must be a bool"]),
    ("create(colour=1)", lambda s: s.Stream.create(colour=1), TypeError, ["colour"]),
    ("StreamPool(0)", lambda s: s.StreamPool(0), ValueError, ["size must be between 1 and 65536", "got 0"]),
    ("StreamPool('4')", lambda s: s.StreamPool("4"), TypeError, ["size must be an int", "'str'"]),
    ("StreamPool(2, device='x')", lambda s: s.StreamPool(2, device="x"), TypeError, ["device must be None", "'str'"]),
    ("wait(a)", lambda s: s.wait(Exporter()), TypeError, ["exactly 2 arguments", "got 1"]),
    ("record(timing=1)", lambda s: s.StreamView(Exporter()).record(timing=1), TypeError, ["timing", "bool"]),
    ("record(True)", lambda s: s.StreamView(Exporter()).record(True), TypeError, ["positional"]),
    ("from_address(-1)", lambda s: s.from_address(-1), ValueError, ["invalid stream address -1", ">= 0"]),
    ("from_address(2**64)", lambda s: s.from_address(2**64), ValueError, ["64-bit"]),
    ("from_address('1')", lambda s: s.from_address("1"), TypeError, ["expected an int", "'str'"]),
    ("from_address(True)", lambda s: s.from_address(True), TypeError, ["'bool'"]),
    ("from_dlpack_stream(0)", lambda s: s.from_dlpack_stream(0), ValueError, ["0 is disallowed"]),
    ("from_dlpack_stream(-2)", lambda s: s.from_dlpack_stream(-2), ValueError, ["invalid stream value -2"]),
    ("from_dlpack_stream(1.0)", lambda s: s.from_dlpack_stream(1.0), TypeError, ["'float'"]),
    ("from_dlpack_stream(2**64)", lambda s: s.from_dlpack_stream(2**64), ValueError, ["64-bit"]),
    ("from_cai_stream(0)", lambda s: s.from_cai_stream(0), ValueError, ["0 is disallowed"]),
    ("from_cai_stream(-3)", lambda s: s.from_cai_stream(-3), ValueError, ["invalid stream value -3"]),
    ("from_cai_stream(True)", lambda s: s.from_cai_stream(True), TypeError, ["'bool'"]),
    ("Event()", lambda s: s.Event(), TypeError, []),
    (
        "wait_external(a)",
        lambda s: s.wait_external(Exporter()),
        TypeError,
        ["wait_external() takes exactly 2 arguments", "event: an Event", "got 1"],
    ),
    (
        "wait_external(a, stream)",
        lambda s: s.wait_external(Exporter(), s.StreamView(Exporter())),
        TypeError,
        ["wait_external: expected a streamlike.Event", "'streamlike.StreamView'"],
    ),
    (
        "wait_external(a, None)",
        lambda s: s.wait_external(s.Stream(Exporter()), None),
        TypeError,
        ["wait_external: expected a streamlike.Event", "'NoneType'"],
    ),
    (
        "StreamView.wait_external(stream)",
        lambda s: s.StreamView(Exporter()).wait_external(Exporter()),
        TypeError,
        ["wait_external: expected a streamlike.Event", "'Exporter'"],
    ),
    (
        "Stream.wait_external(5)",
        lambda s: s.Stream(Exporter()).wait_external(5),
        TypeError,
        ["wait_external: expected a streamlike.Event", "'int'"],
    ),
    ("StreamView.wait_external()", lambda s: s.StreamView(Exporter()).wait_external(), TypeError, ["wait_external"]),
    (
        "wait(a, b, c)",
        lambda s: s.wait(Exporter(), Exporter(), Exporter()),
        TypeError,
        ["exactly 2 arguments", "a stream object or an Event", "got 3"],
    ),
]


@pytest.mark.parametrize("name,call,exc,words", BAD_CALLS, ids=[b[0] for b in BAD_CALLS])
def test_bad_calls_name_what_was_given_and_what_was_expected(streamlike, name, call, exc, words):
    with pytest.raises(exc) as info:
        call(streamlike)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize(
    "call",
    [
        lambda s, event: s.StreamView(Exporter()).wait(event),
        lambda s, event: s.Stream(Exporter()).wait(event),
        lambda s, event: s.wait(Exporter(), event),
        lambda s, event: s.StreamView(Exporter()).wait_external(event),
        lambda s, event: s.Stream(Exporter()).wait_external(event),
        lambda s, event: s.wait_external(Exporter(), event),
    ],
    ids=["StreamView.wait", "Stream.wait", "wait", "StreamView.wait_external", "Stream.wait_external", "wait_external"],
)
def test_an_event_that_was_never_initialized_is_refused_by_every_wait(streamlike, call):
    # Event.__new__ makes an instance no create() filled in: refused before the library sees it.
    event = streamlike.Event.__new__(streamlike.Event)
    with pytest.raises(TypeError, match=r"wait(_external)?: the Event was never initialized.*Event\.create\(\)"):
        call(streamlike, event)


def test_every_wait_names_the_explicit_external_wait(streamlike):
    # The library's refusal of a capturing stream waiting on an outside event points to
    # wait_external(stream, event): the package has it under that name, as a function and a method.
    assert "wait_external" in streamlike.__all__
    assert streamlike.wait_external.__doc__.startswith("wait_external(consumer, event)")
    for cls in (streamlike.Stream, streamlike.StreamView):
        assert cls.wait_external.__doc__.startswith("wait_external(event)"), cls
        assert "recorded in the same capture" in cls.wait.__doc__, cls
        assert "wait_external" in cls.wait.__doc__, cls


def test_streams_cannot_be_subclassed(streamlike):
    # The casters of every module recognise the exact type.
    for cls in (streamlike.Stream, streamlike.StreamView):
        with pytest.raises(TypeError):
            type("Sub", (cls,), {})
