"""Bound C++ functions called inside the Python frameworks' CUDA graph captures.

Skipped as a whole without a GPU; each framework's tests skip when it is not installed. Run on a
GPU machine after building (from the repository root):

    meson setup build-py -Dpython=enabled && meson compile -C build-py
    PYTHONPATH=build-py/test/bridge python3 -m pytest -v test/bridge/gpu_capture.py

What it checks, with both test modules (nanobind and pybind11):
  * functions taking stream_view and shared_stream, asking the device, the priority and whether the
    stream captures, and recording an event, called inside torch.cuda.graph, CuPy's
    begin_capture/end_capture and a cuda.core graph builder, leave the capture intact: each graph is
    replayed 100 times with the expected result;
  * a refused query (the id) raises, names the function and leaves the capture intact;
  * Stream.is_capturing of a C++ stream;
  * retain_until_done of a Python object: on a stream that runs work, its weakref callback fires
    only once the queued work is done; in a capture, only after the graph is deleted and the
    device synchronized; a capture scope opened from C++ gives an executable graph that replays.
"""

import gc
import time
import weakref

import pytest
from conftest import import_bridge, module_names
from device_gate import Gate

_first = import_bridge(module_names()[0])
if _first.cuda_device_count() == 0:
    pytest.skip("no CUDA device (or no driver)", allow_module_level=True)

N = 1 << 20  # int32 elements
FILLED = 0x01010101  # an int32 whose four bytes were memset to 1
REPLAYS = 100


class Payload:
    """A Python object to retain: its weakref callback tells when the last reference went."""


def watch(obj):
    fired = []
    return weakref.ref(obj, lambda _: fired.append(True)), fired


def wait_until(bridge, fired, seconds=10.0):
    """Polls until the weakref callback fired (the release thread drops the reference)."""
    deadline = time.monotonic() + seconds
    while not fired and time.monotonic() < deadline:
        bridge.flush_released()
        gc.collect()
        time.sleep(0.005)
    return bool(fired)


def library_calls(bridge, stream, pointer, nbytes):
    """What a library does with the stream it is given, inside someone's capture."""
    assert bridge.view_is_capturing(stream)
    assert bridge.shared_is_capturing(stream)
    assert bridge.queries_of_view(stream) == 0
    assert bridge.queries_of_shared(stream) == 0  # a keep-alive's first query, while capturing
    with pytest.raises(RuntimeError, match=r"stream_view::id.*capturing"):
        bridge.view_id(stream)  # refused by name, before any call that would invalidate
    bridge.memset_async(pointer, 1, nbytes, stream)


# --- torch.cuda.graph --------------------------------------------------------------------------------


def test_torch_graph_with_bound_functions(bridge, torch):
    x = torch.zeros(N, dtype=torch.int32, device="cuda")
    side = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=side):
        current = torch.cuda.current_stream()
        library_calls(bridge, current, x.data_ptr(), x.numel() * 4)
        x.add_(1)
    assert not bridge.view_is_capturing(side)
    x.zero_()
    torch.cuda.synchronize()
    for _ in range(REPLAYS):
        g.replay()
    torch.cuda.synchronize()
    assert bool((x == FILLED + 1).all())


def test_torch_graph_retains_python_object_until_graph_deleted(bridge, torch):
    x = torch.zeros(16, dtype=torch.int32, device="cuda")
    obj = Payload()
    ref, fired = watch(obj)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        bridge.retain_python(torch.cuda.current_stream(), obj)
        x.add_(1)
    del obj
    for _ in range(REPLAYS):
        g.replay()
    torch.cuda.synchronize()
    bridge.flush_released()
    gc.collect()
    assert not fired and ref() is not None  # the graph still holds it
    assert bool((x == REPLAYS).all())
    del g
    torch.cuda.synchronize()
    assert wait_until(bridge, fired)


def test_retain_on_running_stream_waits_for_queued_work(bridge, torch, cupy):
    s = torch.cuda.Stream()
    obj = Payload()
    ref, fired = watch(obj)
    gate = Gate(cupy).close(s.cuda_stream)  # the stream's work is held until the test opens it
    with gate:
        bridge.retain_python(s, obj)
        del obj
        gc.collect()
        assert gate.wait_started()
        # However long this takes, the host function cannot run: it waits behind the gate.
        assert not wait_until(bridge, fired, seconds=0.2)
        assert ref() is not None
    s.synchronize()
    assert not gate.timed_out
    assert wait_until(bridge, fired)


def test_cpp_capture_scope_replays_and_retains(bridge, torch):
    s = torch.cuda.Stream()
    x = torch.zeros(N, dtype=torch.int32, device="cuda")
    obj = Payload()
    ref, fired = watch(obj)
    exec_ = bridge.capture_memset(s, x.data_ptr(), 1, x.numel() * 4, obj)
    del obj
    assert not bridge.view_is_capturing(s)
    torch.cuda.synchronize()
    assert bool((x == 0).all())  # captured, not run
    for _ in range(REPLAYS):
        exec_.launch(s)
    s.synchronize()
    assert bool((x == FILLED).all())
    gc.collect()
    assert not fired
    del exec_
    torch.cuda.synchronize()
    assert wait_until(bridge, fired)


def test_stream_type_is_capturing(bridge, torch):
    cs = bridge.create_stream()
    assert cs.is_capturing is False
    g = torch.cuda.CUDAGraph()
    ts = torch.cuda.ExternalStream(cs.handle)
    x = torch.zeros(4, dtype=torch.int32, device="cuda")
    with torch.cuda.graph(g, stream=ts):
        assert cs.is_capturing is True
        x.add_(1)
    assert cs.is_capturing is False
    g.replay()
    torch.cuda.synchronize()
    assert bool((x == 1).all())


# --- CuPy ----------------------------------------------------------------------------------------------


def test_cupy_capture_with_bound_functions(bridge, cupy):
    s = cupy.cuda.Stream(non_blocking=True)
    a = cupy.zeros(N, dtype=cupy.int32)
    cupy.cuda.Device().synchronize()
    with s:
        s.begin_capture()
        try:
            library_calls(bridge, s, a.data.ptr, a.nbytes)
            a += 1
        finally:
            g = s.end_capture()
    a.fill(0)
    cupy.cuda.Device().synchronize()
    for _ in range(REPLAYS):
        g.launch(s)
    s.synchronize()
    assert int((a == FILLED + 1).sum()) == N


# --- cuda.core graph builder ---------------------------------------------------------------------------


def test_cuda_core_graph_builder_with_bound_functions(bridge, core, torch):
    device = core.Device(0)
    stream = device.create_stream()
    if not hasattr(stream, "create_graph_builder"):
        pytest.skip("this cuda.core has no Stream.create_graph_builder")
    x = torch.zeros(N, dtype=torch.int32, device="cuda")
    torch.cuda.synchronize()
    builder = stream.create_graph_builder()
    builder.begin_building("global")
    try:
        library_calls(bridge, builder.stream, x.data_ptr(), x.numel() * 4)
    finally:
        builder.end_building()
    graph = builder.complete()
    for _ in range(REPLAYS):
        graph.launch(stream)
    stream.sync()
    assert bool((x == FILLED).all())
