"""The Python bridge's casters, through the nanobind and the pybind11 test modules (fixture
`bridge`, conftest.py), with fake protocol objects: no GPU needed.

Addresses given to stream_view parameters are never dereferenced (the C++ side only reads the
handle back), so fake ones are safe. shared_stream parameters query CUDA for non-default
streams, so the fake objects given to them export the default streams (0, 1 or 2), except in the
test that checks the CUDA error on a machine without a GPU.
"""

import gc
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

LEGACY = 1  # cudaStreamLegacy
PER_THREAD = 2  # cudaStreamPerThread


class Exporter:
    """A stream object: __cuda_stream__() returns the stored `info`, whatever it is."""

    def __init__(self, info):
        self.info = info
        self.calls = 0

    def __cuda_stream__(self):
        self.calls += 1
        return self.info


class AttributeExporter:
    """The deprecated form: __cuda_stream__ is the tuple itself, not a method."""

    def __init__(self, info):
        self.__cuda_stream__ = info


class RaisingExporter:
    """__cuda_stream__() raises the stored exception object."""

    def __init__(self, error):
        self.error = error

    def __cuda_stream__(self):
        raise self.error


class FreshRaisingExporter:
    """__cuda_stream__() raises a new exception each time (re-raising one object would grow its
    traceback, which references this exporter's frames, and look like a leak)."""

    def __cuda_stream__(self):
        raise Boom("fresh")


class PropertyRaisingExporter:
    """Looking __cuda_stream__ up raises (a property that fails)."""

    @property
    def __cuda_stream__(self):
        raise KeyError("lookup failed")


class OptedOut:
    """__cuda_stream__ = None: the object says it is not a stream (like __hash__ = None)."""

    __cuda_stream__ = None


class NotAStream:
    pass


class Boom(Exception):
    pass


def refcounts(*objects):
    """sys.getrefcount of each object. Compare results held in variables: pytest's assertion
    rewriting keeps temporaries of the asserted expression (e.g. `e.info`) alive while it runs."""
    gc.collect()
    return [sys.getrefcount(o) for o in objects]


def swallow(expected, call, *args):
    """Calls and drops the expected exception here, so its traceback (which references the
    arguments' frames) does not keep references alive in the caller."""
    try:
        call(*args)
    except expected:
        return
    pytest.fail(f"{call.__name__} did not raise {expected.__name__}")


# --- the handle C++ sees --------------------------------------------------------------------------


@pytest.mark.parametrize("address", [3, 0x7F00_1234_5678, 2**63 - 1])
def test_view_sees_the_exported_address(bridge, address):
    # stream_view parameter: exactly the address the object exported.
    assert bridge.handle_of(Exporter((0, address))) == address


def test_any_two_sequence_is_accepted(bridge):
    # cuda.core accepts any sequence of length 2, not only a tuple.
    assert bridge.handle_of(Exporter([0, 0x1000])) == 0x1000


def test_integer_subclasses_and_index_objects_are_accepted(bridge):
    # int subclasses and objects with __index__ (numpy integers) are integers.
    class MyInt(int):
        pass

    class Index:
        def __index__(self):
            return 0x2000

    assert bridge.handle_of(Exporter((MyInt(0), MyInt(0x3000)))) == 0x3000
    assert bridge.handle_of(Exporter((0, Index()))) == 0x2000


@pytest.mark.parametrize("exported, seen", [(0, LEGACY), (1, LEGACY), (2, PER_THREAD)])
def test_default_streams(bridge, exported, seen):
    # (0, 0) is CuPy's null stream / numba's default stream: the legacy default stream, whatever
    # the importing translation unit's mode (streamlike::from_cuda_stream_protocol).
    assert bridge.handle_of(Exporter((0, exported))) == seen
    assert bridge.handle_of_shared(Exporter((0, exported))) == seen


def test_protocol_method_is_called_once_per_conversion(bridge):
    e = Exporter((0, 0x4000))
    bridge.handle_of(e)
    assert e.calls == 1


# --- what is not a stream -------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 1, 0x1234])
def test_int_is_not_a_stream(bridge, value):
    with pytest.raises(TypeError) as e:
        bridge.handle_of(value)
    message = str(e.value)
    assert "expected a CUDA stream" in message
    assert "'int'" in message
    assert "__cuda_stream__" in message
    assert "A Python int is not a stream" in message


def test_missing_protocol_names_the_type_and_the_expectation(bridge):
    with pytest.raises(TypeError, match=r"got an object of type 'NotAStream', which has no __cuda_stream__") as e:
        bridge.handle_of(NotAStream())
    assert "__cuda_stream__() method returning (0, address)" in str(e.value)
    with pytest.raises(TypeError, match="NotAStream"):
        bridge.handle_of_shared(NotAStream())


def test_none_is_not_a_stream(bridge):
    with pytest.raises(TypeError):
        bridge.handle_of(None)
    with pytest.raises(TypeError):
        bridge.handle_of_shared(None)


def test_opted_out_object_is_not_a_stream(bridge):
    with pytest.raises(TypeError, match="'OptedOut', which has no __cuda_stream__"):
        bridge.handle_of(OptedOut())


def test_exact_overload_wins_over_the_stream_overload(bridge):
    # overloaded(stream_view) is registered before overloaded(int): an int must still reach the
    # int overload (the stream caster declines in the exact pass), a stream the stream one.
    assert bridge.overloaded(5) == 2
    assert bridge.overloaded(Exporter((0, 0x10))) == 1


# --- malformed protocol results -------------------------------------------------------------------

BAD_RESULTS = [
    # (what __cuda_stream__ returns, exception type, text the message must contain)
    (5, TypeError, "must return a sequence of 2 ints (version, address), got an object of type 'int'"),
    (None, TypeError, "got an object of type 'NoneType'"),
    ("ab", TypeError, "got an object of type 'str'"),
    ((0,), ValueError, "got 1 element(s)"),
    ((0, 1, 2), ValueError, "got 3 element(s)"),
    ([], ValueError, "got 0 element(s)"),
    ((1, 0x1000), ValueError, "protocol version 1; only version 0 is defined"),
    ((-1, 0x1000), ValueError, "protocol version -1"),
    ((2**70, 0x1000), ValueError, "protocol version 1180591620717411303424"),
    (("0", 0x1000), TypeError, "returned a version of type 'str'; expected an int"),
    ((0.0, 0x1000), TypeError, "returned a version of type 'float'"),
    ((0, -5), ValueError, "negative stream address -5"),
    ((0, -(2**70)), ValueError, "negative stream address"),
    ((0, 2**63), ValueError, "beyond 2**63 - 1"),
    ((0, 2**64), ValueError, "beyond 2**63 - 1"),
    ((0, 1.5), TypeError, "returned a stream address of type 'float'"),
    ((0, None), TypeError, "returned a stream address of type 'NoneType'"),
    ((0, "0x10"), TypeError, "returned a stream address of type 'str'"),
]


@pytest.mark.parametrize("result, error, text", BAD_RESULTS, ids=[repr(r[0])[:24] for r in BAD_RESULTS])
@pytest.mark.parametrize("function", ["handle_of", "handle_of_shared", "handle_of_optional"])
def test_malformed_result_is_refused(bridge, function, result, error, text):
    exporter = Exporter(result)
    with pytest.raises(error) as e:
        getattr(bridge, function)(exporter)
    assert text in str(e.value)
    assert "Exporter.__cuda_stream__" in str(e.value)  # names the offending type


def test_exception_inside_the_method_propagates_unchanged(bridge):
    for function in (bridge.handle_of, bridge.handle_of_shared, bridge.handle_of_optional):
        error = Boom("raised inside __cuda_stream__")
        with pytest.raises(Boom) as e:
            function(RaisingExporter(error))
        assert e.value is error  # the very object, not a copy or a wrapper


def test_attribute_error_inside_the_method_is_not_mistaken_for_a_missing_method(bridge):
    error = AttributeError("inner attribute")
    with pytest.raises(AttributeError) as e:
        bridge.handle_of(RaisingExporter(error))
    assert e.value is error


def test_exception_from_the_lookup_propagates(bridge):
    with pytest.raises(KeyError, match="lookup failed"):
        bridge.handle_of(PropertyRaisingExporter())


def test_errors_stop_overload_resolution_instead_of_being_swallowed(bridge):
    # An object that claims to be a stream but exports garbage must not silently fall through to
    # another overload, nor into the binding's generic "incompatible arguments" message.
    with pytest.raises(ValueError, match="protocol version 7"):
        bridge.overloaded(Exporter((7, 0x10)))


# --- the deprecated attribute form ----------------------------------------------------------------


def test_attribute_form_is_accepted_with_a_deprecation_warning(bridge):
    with pytest.warns(DeprecationWarning, match="Implementing __cuda_stream__ as an attribute is deprecated"):
        assert bridge.handle_of(AttributeExporter((0, 0x5000))) == 0x5000
    with pytest.warns(DeprecationWarning):
        assert bridge.handle_of_shared(AttributeExporter((0, 0))) == LEGACY


def test_attribute_form_warning_as_error_raises_it(bridge):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(DeprecationWarning):
            bridge.handle_of(AttributeExporter((0, 0x5000)))


def test_attribute_form_is_validated_too(bridge):
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="protocol version 3"):
        bridge.handle_of(AttributeExporter((3, 0x5000)))


def test_method_form_does_not_warn(bridge):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bridge.handle_of(Exporter((0, 0x6000))) == 0x6000


# --- references: held while C++ holds, released after, never leaked ------------------------------


def test_view_conversion_keeps_no_reference(bridge):
    e = Exporter((0, 0x7000))
    before = refcounts(e, e.info)
    for _ in range(1000):
        bridge.handle_of(e)
    after = refcounts(e, e.info)
    assert after == before


def test_failed_conversions_leak_nothing(bridge):
    # Every error path: exporter and the object it returned keep their counts.
    cases = [(Exporter(r), err) for r, err, _ in BAD_RESULTS]
    cases += [(FreshRaisingExporter(), Boom), (NotAStream(), TypeError), (PropertyRaisingExporter(), KeyError)]
    for exporter, error in cases:
        # The returned object too, where it is one of ours (small ints, None and interned strings
        # are shared by the whole interpreter, so their counts move for other reasons).
        info = getattr(exporter, "info", None)
        watched = [exporter] + ([info] if isinstance(info, (tuple, list)) else [])
        before = refcounts(*watched)
        for function in (bridge.handle_of, bridge.handle_of_shared, bridge.handle_of_optional_shared):
            for _ in range(50):
                swallow(error, function, exporter)
        after = refcounts(*watched)
        assert after == before, f"{type(exporter).__name__} {info!r}"


def test_deprecated_form_leaks_nothing(bridge):
    e = AttributeExporter((0, 0))
    before = refcounts(e, e.__cuda_stream__)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for _ in range(100):
            bridge.handle_of(e)
            bridge.handle_of_shared(e)
    after = refcounts(e, e.__cuda_stream__)
    assert after == before


def test_shared_stream_holds_the_exporter_while_cpp_holds_it(bridge):
    e = Exporter((0, 0))
    (base,) = refcounts(e)
    bridge.hold(e)
    assert refcounts(e) == [base + 1]  # the shared_stream kept in C++ owns one reference
    bridge.hold(e)
    assert refcounts(e) == [base + 2]
    assert bridge.held_use_count(0) == 1  # two separate shared_streams, one reference each
    assert bridge.release_held() == 2
    assert refcounts(e) == [base]  # released with the last C++ reference


def test_shared_stream_parameter_releases_after_the_call(bridge):
    e = Exporter((0, 2))
    (base,) = refcounts(e)
    for _ in range(1000):
        assert bridge.handle_of_shared(e) == PER_THREAD
        assert bridge.use_count_of(e) == 1  # the caster's shared_stream is moved into the parameter
    assert refcounts(e) == [base]


def test_release_from_a_thread_python_does_not_know(bridge):
    # The last C++ reference dropped on a plain std::thread: the reference's destructor takes the
    # GIL itself (the binding released it while the thread ran).
    e = Exporter((0, 1))
    (base,) = refcounts(e)
    for _ in range(10):
        bridge.hold(e)
    assert refcounts(e) == [base + 10]
    assert bridge.release_held_on_other_thread() == 10
    assert refcounts(e) == [base]


def test_reused_blocks_each_hold_their_own_exporter(bridge):
    # A dropped shared_stream's block is kept for the next one (python/detail/reference_block.hpp):
    # made and dropped, reused, made anew while the kept one is in use, dropped on a thread Python
    # does not know; each shared_stream views its own stream and holds its own exporter.
    a, b, c = Exporter((0, 0x1000)), Exporter((0, 0x2000)), Exporter((0, 0x3000))
    base = refcounts(a, b, c)
    assert bridge.handle_of_shared(a) == 0x1000
    held_b = bridge.pass_through(b)
    held_c = bridge.pass_through(c)
    assert (held_b.handle, held_c.handle) == (0x2000, 0x3000)
    assert refcounts(a, b, c) == [base[0], base[1] + 1, base[2] + 1]
    del held_b, held_c
    assert refcounts(a, b, c) == base
    for held in (a, b, c, a):
        bridge.hold(held)
    del held
    assert bridge.release_held_on_other_thread() == 4
    assert refcounts(a, b, c) == base
    assert [bridge.handle_of_shared(e) for e in (c, b, a)] == [0x3000, 0x2000, 0x1000]
    assert refcounts(a, b, c) == base


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


# --- integers in the DLPack and __cuda_array_interface__ conventions ------------------------------


@pytest.mark.parametrize("value, seen", [(None, LEGACY), (-1, None), (1, LEGACY), (2, PER_THREAD), (0x1234, 0x1234)])
def test_dlpack_stream(bridge, value, seen):
    assert bridge.dlpack_handle(value) == seen


@pytest.mark.parametrize("value, seen", [(None, None), (1, LEGACY), (2, PER_THREAD), (0x1234, 0x1234)])
def test_cai_stream(bridge, value, seen):
    assert bridge.cai_handle(value) == seen


@pytest.mark.parametrize(
    "function, value, error, text",
    [
        ("dlpack_handle", 0, ValueError, "DLPack __dlpack__(stream=): invalid stream value 0"),
        ("dlpack_handle", -2, ValueError, "invalid stream value -2"),
        ("dlpack_handle", 2**64, ValueError, "out of the 64-bit range"),
        (
            "dlpack_handle",
            True,
            TypeError,
            "expected a DLPack __dlpack__(stream=) stream integer (an int or None), got an object of type 'bool'",
        ),
        ("dlpack_handle", 1.0, TypeError, "'float'"),
        ("dlpack_handle", Exporter((0, 5)), TypeError, "'Exporter'"),
        ("cai_handle", 0, ValueError, '__cuda_array_interface__ v3 "stream": invalid stream value 0'),
        ("cai_handle", -1, ValueError, "invalid stream value -1"),
        ("cai_handle", "1", TypeError, "'str'"),
    ],
)
def test_stream_integers_refused(bridge, function, value, error, text):
    with pytest.raises(error) as e:
        getattr(bridge, function)(value)
    assert text in str(e.value)


# --- C++ errors while making a shared_stream ------------------------------------------------------


def test_cuda_error_becomes_runtime_error_and_leaks_nothing(bridge):
    # A shared_stream made by keep_alive asks CUDA about the stream on its first query (here
    # stream_device), which fails without a GPU: streamlike::error must arrive as RuntimeError
    # naming the CUDA call, and the reference taken to the exporter must not outlive the failure.
    # On a machine with a GPU a garbage handle could crash the driver, so this runs only without.
    if bridge.cuda_device_count() > 0:
        pytest.skip("a GPU is present: fake stream handles must not reach CUDA")
    e = Exporter((0, 0x1234))
    (base,) = refcounts(e)
    with pytest.raises(RuntimeError, match="cudaStreamGetDevice"):
        bridge.stream_device(e)
    for _ in range(20):
        swallow(RuntimeError, bridge.stream_device, e)
    after = refcounts(e)
    assert after == [base]
    with pytest.raises(RuntimeError, match="shared_stream::create"):
        bridge.create_stream()


# --- known exporters: torch's handle read without running its Python method ----------------------


def fake_torch_stream_class():
    """A class shaped like torch.cuda.Stream: its __cuda_stream__ is a Python function that says
    it is torch's (module torch.cuda.streams, qualname Stream.__cuda_stream__) and returns
    (0, self.cuda_stream). `calls` counts how often the method really runs."""
    calls = []

    def __cuda_stream__(self):
        calls.append(self)
        return (0, self.cuda_stream)

    __cuda_stream__.__module__ = "torch.cuda.streams"
    __cuda_stream__.__qualname__ = "Stream.__cuda_stream__"

    class Stream:
        reads = 0  # how often `cuda_stream` was read

        def __init__(self, handle):
            self.handle = handle

        @property
        def cuda_stream(self):
            type(self).reads += 1
            return self.handle

    Stream.__cuda_stream__ = __cuda_stream__
    return Stream, calls


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
        from test_bridge import fake_torch_stream_class
        Stream, calls = fake_torch_stream_class()
        assert m.handle_of(Stream(0x40)) == 0x40
        print(len(calls))
    """)
    env = dict(os.environ, STREAMLIKE_PYTHON_PROTOCOL_ONLY="1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.abspath(__file__))] + [p for p in sys.path if p])
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1"


# --- interpreter finalization ---------------------------------------------------------------------

FINALIZATION_SCRIPT = textwrap.dedent("""
    import sys, threading
    import {module} as m

    class E:
        def __cuda_stream__(self):
            return (0, 1)

    # C++ statics destroyed by the C++ runtime after Python has finalized: the reference must be
    # skipped, not decref'd (decref'ing would touch a dead interpreter).
    m.hold_until_exit(E())
    # Held in C++ and by a module global: released while the interpreter finalizes.
    m.hold(E())
    keep = m.pass_through(E())
    # A daemon thread still holding a Stream when the interpreter goes away.
    def worker(s):
        threading.Event().wait()
    threading.Thread(target=worker, args=(m.pass_through(E()),), daemon=True).start()
    print("ok", flush=True)
""")


def test_references_are_skipped_safely_at_interpreter_exit(bridge):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.run(
        [sys.executable, "-c", FINALIZATION_SCRIPT.format(module=bridge.__name__)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
    assert proc.stderr == ""
