"""Owning references through __cuda_stream_owned__: capsules given out and taken, refusals, a Cython
module built from the installed pxd, and one Stream type across the bridge suite's modules."""

import gc
import os
import subprocess
import sys
import weakref

import pytest
from package_exporters import Exporter, OffersBoth, OffersOwned


def test_a_stream_gives_out_owning_capsules(streamlike):
    stream = streamlike.Stream(Exporter(0x90))
    capsule = stream.__cuda_stream_owned__()
    assert type(capsule).__name__ == "PyCapsule" and "cuda_stream_owned" in repr(capsule)
    assert stream.use_count == 2  # the capsule holds one reference
    del capsule
    assert stream.use_count == 1  # an unconsumed capsule releases it


def test_stream_takes_an_owning_reference_where_offered(streamlike):
    original = streamlike.Stream(Exporter(0x91))
    for offer in (OffersOwned(original), OffersBoth(original)):
        taken = streamlike.Stream(offer)
        assert taken.source == "owned-capsule" and taken.handle == 0x91 and taken.exporter is offer
        assert original.use_count == 2
        del taken
        assert original.use_count == 1


def test_stream_view_reads_the_protocol_first_and_the_capsule_when_alone(streamlike):
    original = streamlike.Stream(Exporter(0x92))
    both = streamlike.StreamView(OffersBoth(original))
    assert both.source == "protocol" and original.use_count == 1
    alone = streamlike.StreamView(OffersOwned(original))
    assert alone.source == "owned-capsule" and alone.handle == 0x92
    assert original.use_count == 2  # the view holds the reference it was given
    del alone
    assert original.use_count == 1


def test_bad_owning_offers_name_what_was_wrong(streamlike):
    class ReturnsInt:
        def __cuda_stream_owned__(self):
            return 5

    with pytest.raises(TypeError, match="cuda_stream_owned"):
        streamlike.Stream(ReturnsInt())
    capsule = streamlike.Stream(Exporter(0x93)).__cuda_stream_owned__()

    class ReturnsSame:
        def __cuda_stream_owned__(self):
            return capsule

    streamlike.Stream(ReturnsSame())  # consumes it
    with pytest.raises(ValueError, match="consumed"):
        streamlike.Stream(ReturnsSame())

    class Declines:
        def __cuda_stream_owned__(self):
            return None

    with pytest.raises(TypeError, match="__cuda_stream__"):
        streamlike.Stream(Declines())  # no owning reference and no protocol
    assert streamlike.Stream(type("Fallback", (Declines,), {"__cuda_stream__": lambda self: (0, 0x94)})()).source == (
        "protocol"
    )


def test_a_cython_module_from_the_installed_pxd_exchanges_owning_streams(streamlike, cython_holder):
    stream = streamlike.Stream(Exporter(0xB0))
    holder = cython_holder.Holder(stream)  # Cython takes an owning reference from the package
    assert holder.handle == 0xB0 and stream.use_count == 2
    back = streamlike.Stream(holder)  # and hands it back: the package takes it over
    assert back.source == "owned-capsule" and back.handle == 0xB0 and holder.handle is None
    assert stream.use_count == 2
    del back
    assert stream.use_count == 1
    again = cython_holder.Holder(stream)
    again.release()
    assert stream.use_count == 1


def test_modules_return_the_package_stream_type(streamlike, bridge_modules):
    for module in bridge_modules:
        returned = module.legacy_default_stream()
        assert type(returned) is streamlike.Stream, (module.__name__, type(returned))
        assert returned.owning and returned.handle == 1


def test_a_package_stream_crosses_modules_as_one_object_type(streamlike, bridge_modules):
    nb, pb = bridge_modules
    stream = streamlike.Stream(Exporter(0x80))
    assert nb.use_count_of(stream) == 2  # shares the owner: no new keep-alive block
    through_nb = nb.pass_through(stream)
    through_pb = pb.pass_through(through_nb)
    assert type(through_pb) is streamlike.Stream
    assert through_pb.handle == 0x80 and through_pb.use_count == 3  # stream, through_nb, through_pb
    assert nb.handle_of(streamlike.StreamView(stream)) == 0x80


def test_an_owning_reference_crosses_into_a_module_without_the_python_object(streamlike, bridge_modules):
    nb, _ = bridge_modules
    nb.release_held()
    stream = streamlike.Stream(Exporter(0xA0))
    offer = OffersOwned(stream)
    nb.hold(offer)  # the module's shared_stream parameter takes the capsule
    alive = weakref.ref(offer)
    del offer
    gc.collect()
    assert alive() is None
    assert stream.use_count == 2
    nb.release_held()
    assert stream.use_count == 1


def test_a_module_keeps_its_own_type_when_told_to(installed, bridge_modules):
    where = os.environ["STREAMLIKE_BRIDGE_MODULES_DIR"]
    code = (
        "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        "import streamlike, streamlike_nb_test as nb\n"
        "print(type(nb.legacy_default_stream()) is streamlike.Stream)"
    )
    env = {**os.environ, "STREAMLIKE_PYTHON_LOCAL_TYPE": "1"}
    out = subprocess.run([sys.executable, "-c", code, installed.site, where], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
