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


def test_borrow_takes_a_torch_green_context(sl):
    torch, GreenContext = green_context_or_skip()
    ctx = GreenContext.create(num_sms=16, device_id=0)
    if not hasattr(ctx, "Stream"):
        pytest.skip("this torch's GreenContext hands out no streams (GreenContext.Stream)")
    borrowed = sl.Partition.borrow(ctx)
    info = sl.partition_of(ctx.Stream())
    assert info.green
    assert not borrowed.owned and borrowed.sm_count == 16 and borrowed.device == 0
    assert borrowed.id == info.context_id and borrowed.green_context == info.green_context
    assert borrowed == sl.Partition.borrow(info.green_context)
    s = sl.Stream.create(partition=borrowed)  # a stream of our own, in torch's green context
    assert s.partition == info
    s.sync()
    del s, borrowed
    gc.collect()


def test_borrow_takes_a_cuda_core_green_context(sl):
    core = pytest.importorskip("cuda.core")
    for name in ("ContextOptions", "SMResourceOptions"):
        if not hasattr(core, name):
            pytest.skip(f"this cuda.core has no {name}: no green contexts")
    device = core.Device(0)
    device.set_current()
    try:
        groups, _ = device.resources.sm.split(core.SMResourceOptions(count=16))
        ctx = device.create_context(core.ContextOptions(resources=[groups[0]]))
    except (RuntimeError, NotImplementedError) as e:  # a driver or cuda.core without the calls
        pytest.skip(f"cuda.core cannot make a green context here: {e}")
    assert ctx.is_green
    borrowed = sl.Partition.borrow(ctx)
    assert not borrowed.owned and borrowed.device == 0
    assert borrowed.sm_count == groups[0].sm_count
    stream = ctx.create_stream()
    info = sl.partition_of(stream)
    assert info.green and borrowed.id == info.context_id
    with pytest.raises(ValueError, match="a cuda.core Context that is not green"):
        sl.Partition.borrow(device.context)
    side = sl.StreamPool(2).get_for(stream)
    assert side.partition == info
    side.sync()
    del side, borrowed
    gc.collect()
    stream.close()
    ctx.close()
