"""StreamView and Stream without a GPU: what they read, keep alive and share, the errors of what
needs a device, and the integer decoders."""

import gc
import weakref

import pytest
from package_exporters import Exporter, gpu_present


def test_stream_view_reads_the_protocol_and_keeps_the_exporter(streamlike):
    exporter = Exporter(0x1234)
    alive = weakref.ref(exporter)
    view = streamlike.StreamView(exporter)
    assert view.handle == 0x1234
    assert view.source == "protocol"
    assert view.exporter is exporter
    assert view.__cuda_stream__() == (0, 0x1234)
    assert not view.is_default
    assert "Exporter" in repr(view) and "0x1234" in repr(view)
    del exporter
    gc.collect()
    assert alive() is not None  # the view keeps it
    del view
    gc.collect()
    assert alive() is None


def test_stream_view_of_a_default_stream(streamlike):
    view = streamlike.StreamView(Exporter(0))
    assert view.handle == 1  # (0, 0) is the legacy default stream: cudaStreamLegacy
    assert view.is_default


def test_stream_view_accepts_the_deprecated_attribute_form_with_a_warning(streamlike):
    class Attribute:
        __cuda_stream__ = (0, 0x99)

    with pytest.warns(DeprecationWarning):
        assert streamlike.StreamView(Attribute()).handle == 0x99


def test_views_and_streams_compare_and_hash_by_handle(streamlike):
    a, b = streamlike.StreamView(Exporter(0x10)), streamlike.StreamView(Exporter(0x10))
    c = streamlike.StreamView(Exporter(0x20))
    assert a == b and hash(a) == hash(b) and a != c
    assert streamlike.Stream(Exporter(0x10)) == a
    assert a != 0x10  # a handle as an int is not a stream


def test_stream_view_of_a_streamlike_object_reads_it_directly(streamlike):
    stream = streamlike.Stream(Exporter(0x30))
    view = streamlike.StreamView(stream)
    assert view.source == "streamlike" and view.exporter is stream and view.handle == 0x30
    assert streamlike.StreamView(view).handle == 0x30


def test_the_protocol_is_the_way_out(streamlike):
    # Another library reads a StreamView or Stream through __cuda_stream__.
    view = streamlike.StreamView(Exporter(0x40))
    assert isinstance(view, streamlike.CudaStreamLike)
    assert streamlike.StreamView(Exporter(view.__cuda_stream__()[1])).handle == 0x40


# --- Stream ------------------------------------------------------------------------------------


def test_stream_of_an_object_keeps_it_alive_and_owns_a_reference(streamlike):
    exporter = Exporter(0x50)
    alive = weakref.ref(exporter)
    stream = streamlike.Stream(exporter)
    assert stream.owning and stream.use_count == 1
    assert stream.handle == 0x50 and stream.source == "protocol" and stream.exporter is exporter
    assert "owning" in repr(stream) and "Exporter" in repr(stream)
    del exporter
    gc.collect()
    assert alive() is not None
    del stream
    gc.collect()
    assert alive() is None


def test_stream_of_a_stream_shares_its_owner(streamlike):
    first = streamlike.Stream(Exporter(0x60))
    second = streamlike.Stream(first)
    assert second.handle == first.handle and second.source == "streamlike"
    assert first.use_count == 2 and second.use_count == 2
    del second
    assert first.use_count == 1


def test_stream_create_without_a_gpu_names_the_cuda_error(streamlike):
    if gpu_present(streamlike):
        pytest.skip("a GPU is present: Stream.create succeeds")
    with pytest.raises(RuntimeError, match=r"cudaError\w+"):
        streamlike.Stream.create()
    with pytest.raises(RuntimeError, match=r"cudaError\w+"):
        streamlike.StreamPool(2)
    # Everything that needs no GPU still works after the failures.
    assert streamlike.StreamView(Exporter(0x70)).handle == 0x70


def test_queries_without_a_gpu_name_the_cuda_error(streamlike):
    if gpu_present(streamlike):
        pytest.skip("a GPU is present: the queries succeed")
    view = streamlike.StreamView(Exporter(0x1234))
    for fact in ("device", "id", "priority", "flags", "is_capturing"):
        with pytest.raises(RuntimeError, match=r"cudaError\w+"):
            getattr(view, fact)
    # The facts name the query that failed (the core's error, shared_stream's operation), on a
    # fresh view each, since the first query fills the cache all of them read.
    for fact in ("device", "id", "priority", "flags"):
        with pytest.raises(RuntimeError, match=rf"shared_stream::{fact}: cudaStreamGetDevice failed: cudaError\w+"):
            getattr(streamlike.StreamView(Exporter(0x1234)), fact)
        with pytest.raises(RuntimeError, match=rf"shared_stream::{fact}: cudaStreamGetDevice failed: cudaError\w+"):
            getattr(streamlike.Stream(Exporter(0x1234)), fact)
    with pytest.raises(RuntimeError, match=r"cudaError\w+"):
        view.sync()


def test_integer_decoders_follow_their_conventions(streamlike):
    assert streamlike.from_dlpack_stream(None).handle == 1
    assert streamlike.from_dlpack_stream(1).handle == 1
    assert streamlike.from_dlpack_stream(2).handle == 2
    assert streamlike.from_dlpack_stream(-1) is None
    assert streamlike.from_dlpack_stream(0x1234).handle == 0x1234
    assert streamlike.from_dlpack_stream(0x1234).source == "dlpack"
    assert streamlike.from_cai_stream(None) is None
    assert streamlike.from_cai_stream(1).handle == 1
    assert streamlike.from_cai_stream(2).handle == 2
    assert streamlike.from_cai_stream(0x1234).handle == 0x1234
    assert streamlike.from_address(0).handle == 1  # the legacy default stream, named explicitly
    assert streamlike.from_address(2).handle == 2
    assert streamlike.from_address(2**64 - 1).handle == 2**64 - 1
    assert streamlike.from_address(0x1234).exporter is None
