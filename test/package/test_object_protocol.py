"""The package's objects as Python objects, without a GPU: repr, weak references, garbage
collection of cycles through the exporter, pickling refused, forged owning capsules, and the
errors of the capture, retain and event functions where no device is present."""

import copy
import ctypes
import gc
import pickle
import sys
import weakref

import pytest
from package_exporters import Exporter, OffersOwned, gpu_present

# --- repr ----------------------------------------------------------------------------------------


def test_repr_of_a_view_names_handle_ownership_source_and_exporter(streamlike):
    text = repr(streamlike.StreamView(Exporter(0x1234)))
    assert text.startswith("<streamlike.StreamView ") and text.endswith(">")
    for word in ("handle=0x1234", "non-owning", "source=protocol", "exporter=Exporter"):
        assert word in text, (word, text)


def test_repr_of_a_stream_says_it_owns(streamlike):
    text = repr(streamlike.Stream(Exporter(0x4321)))
    for word in ("<streamlike.Stream ", "handle=0x4321", " owning", "source=protocol", "exporter=Exporter"):
        assert word in text, (word, text)


def test_repr_of_a_default_stream_says_it_answers_for_the_current_device(streamlike):
    assert "device=current" in repr(streamlike.from_address(2))
    assert "source=address" in repr(streamlike.from_address(2))


def test_repr_makes_no_cuda_call_for_an_unknown_device(streamlike):
    # A made-up handle: the repr shows no device rather than asking CUDA about it.
    assert "device=" not in repr(streamlike.StreamView(Exporter(0x5555)))


# --- Weak references -----------------------------------------------------------------------------


@pytest.mark.parametrize("make", ["StreamView", "Stream"])
def test_streams_and_views_can_be_weakly_referenced(streamlike, make):
    obj = getattr(streamlike, make)(Exporter(0x77))
    ref = weakref.ref(obj)
    assert ref() is obj
    del obj
    gc.collect()
    assert ref() is None


def test_the_other_types_accept_weak_references(streamlike):
    for cls in (streamlike.Event, streamlike.Graph, streamlike.GraphExec, streamlike.StreamPool):
        assert cls.__weakrefoffset__ != 0, cls


# --- Garbage collection through the exporter -----------------------------------------------------


class HoldsItsOwnStream:
    """An exporter that keeps the streamlike object made from itself: a reference cycle."""

    def __init__(self, make):
        self.stream = make(self)

    def __cuda_stream__(self):
        return (0, 0x6000)


@pytest.mark.parametrize("make", ["StreamView", "Stream"])
def test_a_cycle_through_the_exporter_is_collected(streamlike, make):
    gc.collect()
    exporter = HoldsItsOwnStream(getattr(streamlike, make))
    alive = weakref.ref(exporter)
    stream_alive = weakref.ref(exporter.stream)
    del exporter
    assert alive() is not None  # only the collector can free a cycle
    gc.collect()
    assert alive() is None and stream_alive() is None


def test_a_stream_shared_with_another_owner_keeps_its_exporter(streamlike):
    exporter = HoldsItsOwnStream(streamlike.Stream)
    other = streamlike.Stream(exporter.stream)  # shares the owner: the block is held elsewhere too
    alive = weakref.ref(exporter)
    del exporter
    gc.collect()
    assert alive() is not None and other.use_count == 2
    del other
    gc.collect()
    assert alive() is None


class Holder:
    """An exporter of a fixed stream that other objects are attached to, to close a cycle."""

    def __cuda_stream__(self):
        return (0, 0x6000)


def _owners_of_one_block(sl, x):
    """Python objects that share the block Stream(x) made: Streams and, through capsules, a
    Stream and a StreamView of objects that offer only __cuda_stream_owned__."""
    first = sl.Stream(x)
    second = sl.Stream(first)
    third = sl.Stream(second)
    return [first, second, third, sl.Stream(OffersOwned(first)), sl.StreamView(OffersOwned(first))]


# Each shape: which of the block's owners the exporter keeps (the others are dropped).
CYCLE_SHAPES = {
    "Stream(Stream(x)) kept": [1],
    "Stream(Stream(Stream(x))) kept": [2],
    "Stream(x) and Stream(Stream(x)) kept": [0, 1],
    "every owner kept": [0, 1, 2, 3, 4],
    "a Stream from a capsule kept": [3],
    "a StreamView from a capsule kept": [4],
    "a capsule Stream and a capsule StreamView kept": [3, 4],
}


@pytest.mark.parametrize("kept", CYCLE_SHAPES.values(), ids=CYCLE_SHAPES.keys())
def test_a_cycle_through_a_block_shared_by_several_objects_is_collected(streamlike, kept):
    gc.collect()
    x = Holder()
    owners = _owners_of_one_block(streamlike, x)
    assert owners[0].use_count == 5  # one block, every object an owner of it (the view too)
    x.kept = [owners[i] for i in kept]
    alive = weakref.ref(x)
    kept_alive = [weakref.ref(o) for o in x.kept]
    del x, owners
    gc.collect()
    assert alive() is None and all(k() is None for k in kept_alive)


@pytest.mark.parametrize("kept", CYCLE_SHAPES.values(), ids=CYCLE_SHAPES.keys())
def test_a_block_shared_with_an_object_outside_the_cycle_keeps_the_exporter(streamlike, kept):
    x = Holder()
    owners = _owners_of_one_block(streamlike, x)
    x.kept = [owners[i] for i in kept]
    outside = next(o for i, o in enumerate(owners) if i not in kept) if len(kept) < len(owners) else None
    alive = weakref.ref(x)
    del x, owners
    gc.collect()
    if outside is None:
        assert alive() is None
        return
    assert alive() is not None and alive().kept  # the exporter and its attributes are untouched
    del outside
    gc.collect()
    assert alive() is None


def test_a_block_shared_with_cpp_keeps_the_exporter(streamlike, bridge_modules):
    for module in bridge_modules:
        x = Holder()
        x.stream = streamlike.Stream(streamlike.Stream(x))
        module.hold(x.stream)  # a C++ owner of the block: the exporter is a root
        alive = weakref.ref(x)
        del x
        gc.collect()
        assert alive() is not None and alive().stream.owning
        module.release_held()
        gc.collect()
        assert alive() is None


def test_a_capture_held_by_its_stream_object_is_collected(streamlike):
    gc.collect()
    x = Holder()
    x.capture = streamlike.capture(x)
    x.captures = [streamlike.capture(streamlike.Stream(x)), streamlike.capture(streamlike.StreamView(x))]
    alive = weakref.ref(x)
    del x
    gc.collect()
    assert alive() is None


def test_every_owning_reference_is_visited_once(streamlike):
    # gc.get_referents is tp_traverse: the block's own reference to x is reported by exactly one of
    # its Python owners while only they share it; each owner reports its own once.
    x = Holder()
    owners = _owners_of_one_block(streamlike, x)
    visits = [sum(r is x for r in gc.get_referents(o)) for o in owners]
    exporters = [o.exporter is x for o in owners]
    own = [1 + e for e in exporters]  # its own reference to x, and x as its exporter
    extra = [v - n for v, n in zip(visits, own, strict=True)]
    assert sorted(extra) == [0, 0, 0, 0, 1], (visits, exporters)
    assert sys.getrefcount(x) - 1 - 1 == sum(visits)  # minus getrefcount's argument and `x`


# --- Pickling is refused -------------------------------------------------------------------------


@pytest.mark.parametrize("make", ["StreamView", "Stream"])
@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_pickling_a_stream_is_refused_saying_why(streamlike, make, protocol):
    obj = getattr(streamlike, make)(Exporter(0x88))
    with pytest.raises(TypeError, match="cannot leave its process"):
        pickle.dumps(obj, protocol=protocol)
    with pytest.raises(TypeError, match="cannot leave its process"):
        copy.deepcopy(obj)


def test_equality_and_hashing_are_by_handle(streamlike):
    view, stream = streamlike.StreamView(Exporter(0x99)), streamlike.Stream(Exporter(0x99))
    assert view == stream and hash(view) == hash(stream) == hash(streamlike.StreamView(Exporter(0x99)))
    assert {view: 1}[stream] == 1


# --- Forged owning capsules ----------------------------------------------------------------------

DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class OwnedStream(ctypes.Structure):
    """streamlike_owned_stream (include/streamlike/c/owned_stream.h), version 1.0."""

    _fields_ = [
        ("major_version", ctypes.c_uint32),
        ("minor_version", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
        ("handle", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("device", ctypes.c_int32),
        ("priority", ctypes.c_int32),
        ("stream_id", ctypes.c_uint64),
        ("context_id", ctypes.c_uint64),
        ("reserved", ctypes.c_uint64 * 8),
    ]


CAPSULE_NAME = b"cuda_stream_owned"
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class Forged:
    """Offers one capsule holding `struct` (no capsule destructor: the test counts releases)."""

    def __init__(self, struct):
        self.struct = struct
        self.capsule = _capsule_new(ctypes.addressof(struct), CAPSULE_NAME, None)

    def __cuda_stream_owned__(self):
        return self.capsule


def forged(handle=0x1234, major=1, flags=0, deleter=True):
    released = []
    struct = OwnedStream(major_version=major, minor_version=0, handle=handle, flags=flags, device=-1)
    if deleter:
        struct.deleter = DELETER(lambda self: released.append(self))
    return Forged(struct), released


def test_a_well_formed_forged_capsule_is_taken_and_released_once(streamlike):
    offer, released = forged()
    stream = streamlike.Stream(offer)
    assert stream.source == "owned-capsule" and stream.handle == 0x1234 and stream.owning
    assert released == []
    del stream
    gc.collect()
    assert len(released) == 1


@pytest.mark.parametrize(
    "fields,words,releases",
    [
        (dict(deleter=False), ["null deleter"], 0),
        (dict(major=2), ["unknown major version 2.0"], 0),
        (dict(handle=0), ["handle is null"], 1),
        (dict(handle=0x1, flags=0), ["contradict"], 1),
        (dict(handle=0x1234, flags=1), ["contradict"], 1),
        (dict(handle=0x2, flags=1), ["contradict"], 1),
    ],
    ids=[
        "null-deleter",
        "major-version",
        "null-handle",
        "legacy-without-flag",
        "flag-without-legacy",
        "wrong-default-flag",
    ],
)
@pytest.mark.parametrize("make", ["Stream", "StreamView"])
def test_every_checkable_field_of_a_forged_capsule_is_checked(streamlike, make, fields, words, releases):
    offer, released = forged(**fields)
    with pytest.raises(ValueError) as info:
        getattr(streamlike, make)(offer)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    # Refused before the struct was used for anything but its checks; released once where the
    # consumer took it over, never where it left the capsule unconsumed.
    assert len(released) == releases


def test_a_capsule_of_another_name_is_refused(streamlike):
    struct = OwnedStream(major_version=1, handle=0x1234)

    class Offers:
        def __cuda_stream_owned__(self):
            return _capsule_new(ctypes.addressof(struct), b"something_else", None)

    with pytest.raises(TypeError, match="named 'cuda_stream_owned'"):
        streamlike.Stream(Offers())


# --- Errors without a device ---------------------------------------------------------------------


def test_capture_retain_and_capture_info_without_a_gpu_name_the_cuda_error(streamlike):
    if gpu_present(streamlike):
        pytest.skip("a GPU is present")
    view = streamlike.StreamView(Exporter(0x1234))
    held = object()
    count = sys.getrefcount(held)
    with pytest.raises(RuntimeError, match=r"cudaError\w+"):
        streamlike.retain_until_done(view, held)
    assert sys.getrefcount(held) == count  # released when refused
    with pytest.raises(RuntimeError, match=r"cudaError\w+"):
        _ = view.capture_info
    with pytest.raises(RuntimeError, match=r"cudaError\w+"):
        with streamlike.capture(view):
            pass
    with pytest.raises(RuntimeError, match=r"cudaError\w+"):
        streamlike.Event.create()


def test_capture_arguments_are_checked_before_any_cuda_call(streamlike):
    view = streamlike.StreamView(Exporter(0x1234))
    with pytest.raises(ValueError, match="'global', 'thread_local' or 'relaxed'"):
        streamlike.capture(view, mode="local")
    with pytest.raises(TypeError, match="__cuda_stream__"):
        streamlike.capture(5)
    with pytest.raises(TypeError, match="exactly 2 arguments"):
        streamlike.retain_until_done(view)
    with pytest.raises(TypeError, match="__cuda_stream__"):
        streamlike.retain_until_done(5, object())
    with pytest.raises(TypeError, match="device must be None"):
        streamlike.Event.create(device="0")
    assert "not entered" in repr(streamlike.capture(view))


def test_capture_info_is_a_named_tuple_of_status_and_id(streamlike):
    info = streamlike.CaptureInfo(("active", 7))
    assert info.status == "active" and info.id == 7 and info == ("active", 7)
    assert repr(info) == "streamlike.CaptureInfo(status='active', id=7)"
