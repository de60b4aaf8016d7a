"""The package's partitions with a GPU: streamlike.Partition and its streams, StreamPool.get_for,
and torch's green-context streams (torch.cuda.green_contexts.GreenContext) recognized by
StreamView.partition and followed by get_for. Skips without a GPU, without green contexts in the
driver, and (the torch tests) without a torch that has GreenContext."""

import gc

import pytest
from gpu_presence import skip_module_without_gpu

skip_module_without_gpu()


def partition_or_skip(sl, sm_count=16):
    try:
        return sl.Partition.create(0, sm_count)
    except RuntimeError as e:  # a driver without green contexts
        pytest.skip(f"no green contexts: {e}")


def green_context_or_skip():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    green_contexts = getattr(torch.cuda, "green_contexts", None)
    if green_contexts is None or not getattr(green_contexts, "SUPPORTED", True):
        pytest.skip("this torch has no torch.cuda.green_contexts")
    return torch, green_contexts.GreenContext


def test_streams_made_on_a_partition_run_and_report_it(sl):
    p = partition_or_skip(sl)
    s = sl.Stream.create(partition=p)
    info = s.partition
    assert info is not None and info.green and info.sm_count == 16 and info.context_id == p.id
    assert sl.Stream.create().partition is None
    pool = sl.StreamPool(4)
    side = pool.get_for(s)
    assert side.partition == info
    side.wait(s)
    s.wait(side)
    s.sync()
    assert s.is_done()


def test_torch_green_context_streams_are_recognized_and_followed(sl):
    torch, GreenContext = green_context_or_skip()
    ctx = GreenContext.create(16, 0)
    if not hasattr(ctx, "Stream"):
        pytest.skip("this torch's GreenContext hands out no streams (GreenContext.Stream)")
    stream = ctx.Stream()
    info = sl.StreamView(stream).partition
    assert info is not None and info.green and info.device == 0
    assert info.sm_count == 16  # 16 is a whole number of the H200's 8-SM granules
    assert sl.partition_of(stream) == info
    borrowed = sl.Partition.borrow(info.green_context)
    assert not borrowed.owned and borrowed.sm_count == 16 and borrowed.id == info.context_id
    pool = sl.StreamPool(2)
    side = pool.get_for(stream)
    assert side.partition == info
    with torch.cuda.stream(stream):
        x = torch.ones(1 << 20, device="cuda")
    side.wait(sl.StreamView(stream))
    side.sync()
    assert x.sum().item() == 1 << 20
    # The pool's sub-pool borrows torch's green context: dropped before it.
    del side, pool, borrowed
    gc.collect()


def test_torch_current_stream_under_set_context_is_green(sl):
    torch, GreenContext = green_context_or_skip()
    ctx = GreenContext.create(16, 0)
    enter = getattr(ctx, "set_context", None) or getattr(ctx, "make_current", None)
    leave = getattr(ctx, "pop_context", None) or getattr(ctx, "pop_current", None)
    if enter is None or leave is None:
        pytest.skip("this torch's GreenContext cannot be made current")
    assert sl.StreamView(torch.cuda.current_stream()).partition is None
    enter()
    try:
        info = sl.StreamView(torch.cuda.current_stream()).partition
        assert info is not None and info.sm_count == 16
    finally:
        leave()
    assert sl.StreamView(torch.cuda.current_stream()).partition is None
