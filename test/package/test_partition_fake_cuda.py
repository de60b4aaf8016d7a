"""streamlike.Partition, Stream.create(partition=), StreamView.partition and StreamPool.get_for,
without a GPU: the package built against the fake CUDA (test/package/fake_cuda), whose driver
models an H200's green contexts (132 SMs per device, split in multiples of 8). Each answer is the
library's (streamlike::partition, partition_of, stream_pool::get_for); what is checked here is that
the package hands them through: values, refusals by name, lifetimes, and no capture invalidated.

    LD_PRELOAD=$PWD/build/test/fake_cuda/libstreamlike_fake_cuda.so \\
    STREAMLIKE_FAKE_CUDA_LIBRARY=$PWD/build/test/fake_cuda/libstreamlike_fake_cuda.so \\
    STREAMLIKE_PACKAGE_SITE=build/test/package/fake_cuda \\
    python3 -m pytest test/package/test_partition_fake_cuda.py
"""

import ctypes
import gc
import os
import pickle

import pytest

_path = os.environ.get("STREAMLIKE_FAKE_CUDA_LIBRARY")
if not _path:
    pytest.skip(
        "STREAMLIKE_FAKE_CUDA_LIBRARY is not set: this file runs against the preloaded fake CUDA",
        allow_module_level=True,
    )
fake = ctypes.CDLL(_path)
fake.fake_cuda_live_green_contexts.restype = ctypes.c_long
fake.fake_cuda_green_context_of.argtypes = [ctypes.c_void_p]
fake.fake_cuda_green_context_of.restype = ctypes.c_void_p
fake.fake_cuda_invalidations.restype = ctypes.c_size_t
fake.fake_cuda_capture_status.argtypes = [ctypes.c_void_p]


@pytest.fixture(scope="module")
def sl(streamlike):
    assert fake.fake_cuda_present() == 1
    return streamlike


class Exporter:
    """A foreign stream object (the protocol only), as torch's or cuda.core's green streams are."""

    def __init__(self, stream):
        self.stream = stream

    def __cuda_stream__(self):
        return self.stream.__cuda_stream__()


@pytest.mark.parametrize("asked, got", [(1, 8), (8, 8), (10, 16), (16, 16), (128, 128)])
def test_partition_create_reports_the_sm_count_the_driver_gives(sl, asked, got):
    before = fake.fake_cuda_live_green_contexts()
    p = sl.Partition.create(0, asked)
    assert (p.device, p.sm_count, p.owned) == (0, got, True)
    assert p.id != 0 and p.green_context != 0
    assert f"sm_count={got}" in repr(p)
    assert fake.fake_cuda_live_green_contexts() == before + 1
    del p
    gc.collect()
    assert fake.fake_cuda_live_green_contexts() == before


@pytest.mark.parametrize(
    "args, error, message",
    [
        ((0, 0), ValueError, "partition::create: sm_count 0"),
        ((0, 133), ValueError, "sm_count 133 is more than device 0's 132 SMs"),
        ((5, 16), ValueError, "device 5 does not exist"),
        ((0, 132), RuntimeError, "partition::create: cuDevSmResourceSplitByCount"),
    ],
)
def test_partition_create_refuses_by_name(sl, args, error, message):
    with pytest.raises(error, match=message):
        sl.Partition.create(*args)


def test_streams_made_on_a_partition_report_it_and_plain_ones_report_none(sl):
    p = sl.Partition.create(0, 16)
    assert p != 16 and p == p
    green = sl.Stream.create(partition=p)
    plain = sl.Stream.create()
    assert fake.fake_cuda_green_context_of(green.handle) == p.green_context
    for obj in (green, sl.StreamView(green), sl.StreamView(Exporter(green))):
        info = obj.partition
        assert info is not None
        assert (info.green, info.device, info.sm_count) == (True, 0, 16)
        assert info.context_id == p.id and info.green_context == p.green_context
        assert sl.partition_of(obj) == info
        assert info != "a PartitionInfo"  # comparing with another type is False, not an error
    for obj in (plain, sl.StreamView(plain), sl.StreamView(Exporter(plain))):
        assert obj.partition is None
        info = sl.partition_of(obj)
        assert (info.green, info.sm_count, info.green_context) == (False, 132, 0)


class FakeTorchGreenContext:
    """torch.cuda.green_contexts.GreenContext's surface (torch/csrc/cuda/GreenContext.cpp binds create,
    set_context, pop_context and Stream): no handle, streams from Stream()."""

    def __init__(self, stream):
        self.stream, self.streams_made = stream, 0

    def set_context(self):
        raise AssertionError("Partition.borrow must not make the green context current")

    pop_context = set_context

    def Stream(self):  # noqa: N802 (torch's name)
        self.streams_made += 1
        return Exporter(self.stream)


class FakeCoreContext:
    """cuda.core's Context surface (cuda_core/cuda/core/_context.pyx): handle (a CUcontext, not the
    CUgreenCtx), is_green, resources, create_stream(), close()."""

    def __init__(self, stream, green):
        self.stream, self.is_green, self.streams_made = stream, green, 0
        self.handle = 0x1234  # a CUcontext: of no use to find the green context

    def create_stream(self, options=None):
        assert options is None
        self.streams_made += 1
        return Exporter(self.stream)

    def close(self):
        raise AssertionError("Partition.borrow must not close the context")


def test_borrow_takes_torch_and_cuda_core_green_contexts_and_green_streams(sl):
    p = sl.Partition.create(0, 16)
    green = sl.Stream.create(partition=p)
    greens = fake.fake_cuda_live_green_contexts()
    torch_like = FakeTorchGreenContext(green)
    core_like = FakeCoreContext(green, green=True)
    for given in (p.green_context, torch_like, core_like, green, Exporter(green), sl.StreamView(green)):
        borrowed = sl.Partition.borrow(given)
        assert not borrowed.owned
        assert (borrowed.device, borrowed.sm_count, borrowed.id) == (0, 16, p.id)
        assert borrowed.green_context == p.green_context
        assert borrowed == p  # one green context: equal by context id
    assert torch_like.streams_made == 1 and core_like.streams_made == 1
    del borrowed
    gc.collect()
    assert fake.fake_cuda_live_green_contexts() == greens  # a borrowed partition never destroys it


@pytest.mark.parametrize(
    "given, error, message",
    [
        ("a string", TypeError, r"Partition.borrow: an object of type 'str'; expected an int \(a CUgreenCtx address\)"),
        (True, TypeError, "an object of type 'bool'"),
        (None, TypeError, "an object of type 'NoneType'; expected .* torch.cuda.green_contexts.GreenContext"),
        (-1, ValueError, "Partition.borrow: -1 is not a green context address"),
    ],
)
def test_borrow_refuses_what_is_no_green_context_by_name(sl, given, error, message):
    with pytest.raises(error, match=message):
        sl.Partition.borrow(given)


def test_borrow_refuses_plain_streams_and_a_primary_cuda_core_context(sl):
    plain = sl.Stream.create()
    for given, what in (
        (plain, "the stream of type 'streamlike.Stream'"),
        (FakeTorchGreenContext(plain), "a torch GreenContext of type 'FakeTorchGreenContext'"),
    ):
        with pytest.raises(ValueError, match=f"Partition.borrow: {what} is in no green context"):
            sl.Partition.borrow(given)
    primary = FakeCoreContext(plain, green=False)
    with pytest.raises(ValueError, match="a cuda.core Context that is not green"):
        sl.Partition.borrow(primary)
    assert primary.streams_made == 0  # refused before asking for a stream


def test_stream_create_refuses_a_bad_partition_argument_by_name(sl):
    p = sl.Partition.create(0, 16)
    with pytest.raises(TypeError, match="Stream.create: partition must be a streamlike.Partition or None, got 'int'"):
        sl.Stream.create(partition=16)
    with pytest.raises(ValueError, match="a blocking stream on a partition"):
        sl.Stream.create(non_blocking=False, partition=p)


def test_the_last_stream_keeps_the_green_context_alive(sl):
    before = fake.fake_cuda_live_green_contexts()
    p = sl.Partition.create(0, 16)
    s = sl.Stream.create(partition=p)
    del p
    gc.collect()
    assert fake.fake_cuda_live_green_contexts() == before + 1
    assert s.partition.sm_count == 16
    del s
    gc.collect()
    assert fake.fake_cuda_live_green_contexts() == before


def test_get_for_hands_out_streams_of_the_callers_partition(sl):
    a, b = sl.Partition.create(0, 16), sl.Partition.create(0, 32)
    pool = sl.StreamPool(4)
    plain_pool = {pool.at(i).handle for i in range(len(pool))}
    cases = [
        (sl.Stream.create(partition=a), a.id),
        (Exporter(sl.Stream.create(partition=b)), b.id),
        (sl.Stream.create(), None),
    ]
    for caller, partition_id in cases:
        handed = {pool.get_for(caller).handle for _ in range(8)}
        assert len(handed) == 4
        for handle in handed:
            info = sl.partition_of(sl.from_address(handle))
            if partition_id is None:
                assert not info.green and handle in plain_pool
            else:
                assert info.green and info.context_id == partition_id


def test_partition_and_get_for_leave_a_capture_intact(sl):
    p = sl.Partition.create(0, 16)
    pool = sl.StreamPool(2)
    for mode in ("global", "thread_local", "relaxed"):
        for stream in (sl.Stream.create(partition=p), sl.Stream.create()):
            fake.fake_cuda_reset_log()
            with sl.capture(stream, mode=mode):
                before = stream.partition
                side = pool.get_for(stream)
                assert stream.partition == before
                assert sl.partition_of(side).context_id == sl.partition_of(stream).context_id
                assert fake.fake_cuda_capture_status(stream.handle) == 1
            assert fake.fake_cuda_invalidations() == 0


def test_partitions_cannot_be_pickled(sl):
    p = sl.Partition.create(0, 8)
    with pytest.raises(TypeError, match="streamlike.Partition"):
        pickle.dumps(p)
    with pytest.raises(TypeError, match="streamlike.PartitionInfo"):
        pickle.dumps(sl.partition_of(sl.Stream.create(partition=p)))
