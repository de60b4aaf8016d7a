"""One current stream across frameworks, with a GPU: `streamlike.use` sets torch's, CuPy's and
tvm-ffi's current streams and restores each (also after an exception, and only on its own thread),
current_stream() under torch.cuda.graph is the capturing stream, a CuPy-based op called under
streamlike.use runs on the stream torch code meant (the shape of sglang#36572), and a bound C++
function defaults to the current stream. Each test skips without a GPU or its framework."""

import importlib
import importlib.util
import os
import sys
import threading

import pytest
from gpu_presence import skip_module_without_gpu

N = 1 << 22
SLEEP_CYCLES = 200_000_000  # torch.cuda._sleep: about 0.1 s on an H200, holding a stream


skip_module_without_gpu()


@pytest.fixture(scope="module")
def sl(streamlike):
    if not hasattr(streamlike, "use"):
        pytest.fail("the package lacks streamlike.use (add_current_stream(m) and _use.py are not wired in)")
    return streamlike


def handle(view):
    return view.__cuda_stream__()[1]


def tvm_stream(tvm_ffi, device):
    return tvm_ffi.get_raw_stream(tvm_ffi.device("cuda", device))


def test_use_of_a_cupy_stream_sets_torch_cupy_and_tvm_ffi_and_restores_each(sl, torch, cupy):
    tvm_ffi = importlib.import_module("tvm_ffi") if importlib.util.find_spec("tvm_ffi") else None
    dev = torch.cuda.current_device()
    names = sl.current_stream_providers()
    assert names[0] == "torch" and "cupy" in names and names[-1] == "streamlike", names
    if tvm_ffi is not None:
        assert "tvm-ffi" in names, names
    s = cupy.cuda.Stream(non_blocking=True)
    torch_before = torch.cuda.current_stream().cuda_stream
    cupy_before = cupy.cuda.get_current_stream()
    tvm_before = tvm_stream(tvm_ffi, dev) if tvm_ffi else None
    for raise_inside in (False, True):
        try:
            with sl.use(s):
                assert torch.cuda.current_stream().cuda_stream == s.ptr
                assert cupy.cuda.get_current_stream().ptr == s.ptr
                if tvm_ffi:
                    assert tvm_stream(tvm_ffi, dev) == s.ptr
                assert handle(sl.current_stream()) == s.ptr
                assert sl.current_stream_conflicts() == []
                if raise_inside:
                    raise KeyError("leaves the block")
        except KeyError:
            assert raise_inside
        assert torch.cuda.current_stream().cuda_stream == torch_before
        assert cupy.cuda.get_current_stream() is cupy_before  # the very object, not a copy
        if tvm_ffi:
            assert tvm_stream(tvm_ffi, dev) == tvm_before


def test_leaving_use_puts_back_torchs_very_stream(sl, torch):
    # torch's current stream is a stream id beside the handle; use enters and leaves through torch's
    # own guard, so the pool stream that was current compares equal to it again afterwards.
    s = torch.cuda.Stream()
    x = torch.cuda.Stream()
    with torch.cuda.stream(s):
        with sl.use(x):
            assert torch.cuda.current_stream().cuda_stream == x.cuda_stream
        assert torch.cuda.current_stream() == s
    assert torch.cuda.current_stream() == torch.cuda.default_stream()


def test_use_on_one_thread_leaves_other_threads_alone(sl, torch, cupy):
    s = torch.cuda.Stream()
    inside = threading.Event()
    release = threading.Event()
    seen = {}

    def other():
        inside.wait()
        seen["torch"] = torch.cuda.current_stream().cuda_stream
        seen["cupy"] = cupy.cuda.get_current_stream().ptr
        seen["streamlike"] = handle(sl.current_stream())
        release.set()

    t = threading.Thread(target=other)
    t.start()
    with sl.use(s):
        inside.set()
        release.wait()
    t.join()
    assert s.cuda_stream not in seen.values(), seen


def test_under_torch_graph_current_stream_is_the_capturing_stream(sl, torch):
    x = torch.zeros(1024, device="cuda")
    g = torch.cuda.CUDAGraph()
    seen = {}
    with torch.cuda.graph(g):
        seen["capturing"] = torch.cuda.current_stream().cuda_stream
        seen["current"] = handle(sl.current_stream())
        with sl.use(sl.current_stream()):  # setting it under capture does not touch the stream
            x.add_(1)
    assert seen["current"] == seen["capturing"]
    g.replay()  # the capture stayed valid
    torch.cuda.synchronize()
    assert x[0].item() == 1.0


def cupy_view(cupy, tensor):
    """A CuPy array over a torch tensor's memory, made without any synchronization (cupy.asarray
    would synchronize with the stream of the tensor's __cuda_array_interface__, and DLPack would
    order the streams: either would hide which stream the CuPy op runs on)."""
    memory = cupy.cuda.UnownedMemory(tensor.data_ptr(), tensor.numel() * tensor.element_size(), tensor)
    return cupy.ndarray(tuple(tensor.shape), dtype=cupy.uint8, memptr=cupy.cuda.MemoryPointer(memory, 0))


def _cupy_op_after_held_torch_work(torch, cupy, s, scope):
    """The shape of sglang#36572: torch code holds `s` (a long sleep) and queues buf.fill_(1) on it,
    then a CuPy-based op writes 2 into buf on CuPy's current stream. Returns the value left."""
    buf = torch.zeros(N, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    with scope(s):
        torch.cuda._sleep(SLEEP_CYCLES)
        buf.fill_(1)
        cupy_view(cupy, buf).fill(2)  # a library written with CuPy: no stream argument, no wrapper
    torch.cuda.synchronize()
    values = buf.unique().tolist()
    assert len(values) == 1, values
    return values[0]


def test_a_cupy_op_under_use_runs_on_torchs_stream(sl, torch, cupy):
    s = torch.cuda.Stream()
    assert _cupy_op_after_held_torch_work(torch, cupy, s, sl.use) == 2


def test_a_cupy_op_under_torch_stream_alone_runs_elsewhere(torch, cupy):
    # The control: torch.cuda.stream sets torch's stream only; CuPy's op runs on its own stream,
    # before the held work, and the 1 queued behind the sleep overwrites its 2.
    s = torch.cuda.Stream()
    assert _cupy_op_after_held_torch_work(torch, cupy, s, torch.cuda.stream) == 1


@pytest.fixture(scope="module")
def current_module(sl):
    where = os.environ.get("STREAMLIKE_BRIDGE_MODULES_DIR")
    if not where or not os.path.isdir(where):
        pytest.skip("the bridge suite's test modules were not built")
    if where not in sys.path:
        sys.path.append(where)
    return importlib.import_module("streamlike_current_nb_test")


def test_a_bound_function_defaults_to_the_stream_of_use(sl, torch, cupy, current_module):
    s = cupy.cuda.Stream(non_blocking=True)
    buf = torch.zeros(16, dtype=torch.uint8, device="cuda")
    with sl.use(s):
        assert current_module.memset_on(buf.data_ptr(), 16, 1) == s.ptr
        assert current_module.memset_on(buf.data_ptr(), 16, 1, stream=sl.CURRENT) == s.ptr
        assert current_module.memset_on_current(buf.data_ptr(), 16, 1) == s.ptr
    s.synchronize()


def test_a_bound_function_sees_a_cupy_stream_through_the_package(sl, cupy, current_module):
    # CuPy's current stream only the package can read (its provider needs Python): the module's
    # stream_or_current asks the package when its own copy names no stream.
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        assert current_module.stream_arg() == (s.ptr, True)


def test_the_check_flags_a_stream_other_than_the_current_one(sl, torch, current_module, capfd):
    s = torch.cuda.Stream()
    other = torch.cuda.Stream()
    buf = torch.zeros(16, dtype=torch.uint8, device="cuda")
    sl.set_current_stream_check(True)
    current_module.set_check(True)  # the module's own copy of libstreamlike
    try:
        with sl.use(s):
            current_module.memset_on(buf.data_ptr(), 16, 1, stream=s)
            assert "not the current stream" not in capfd.readouterr().err
            current_module.memset_on(buf.data_ptr(), 16, 1, stream=other)
        torch.cuda.synchronize()
    finally:
        sl.set_current_stream_check(False)
        current_module.set_check(False)
    err = capfd.readouterr().err
    assert err.count("not the current stream") == 1, err


def test_use_of_a_default_stream_keeps_torch_and_cupy_on_their_own_default(sl, torch, cupy):
    # The legacy default stream, however it is named, is handed to torch as its handle 0 and to
    # CuPy as Stream.null: torch ops inside run (an external stream of id 1 would refuse them).
    x = torch.zeros(1024, device="cuda")
    for s in (torch.cuda.default_stream(), cupy.cuda.Stream.null, sl.current_stream()):
        with sl.use(s):
            x.add_(1)
            assert torch.cuda.current_stream() == torch.cuda.default_stream()
            assert cupy.cuda.get_current_stream() is cupy.cuda.Stream.null
            assert sl.current_stream_conflicts() == []
    torch.cuda.synchronize()
    assert x[0].item() == 3.0


def test_a_framework_block_inside_use_wins_whatever_it_names(sl, torch, cupy):
    s = torch.cuda.Stream()
    with sl.use(s):
        assert handle(sl.current_stream()) == s.cuda_stream
        with torch.cuda.stream(torch.cuda.default_stream()):
            assert handle(sl.current_stream()) in (0, 1)  # torch's default stream, as torch launches
        with cupy.cuda.Stream.null:
            assert handle(sl.current_stream()) in (0, 1)
        t = torch.cuda.Stream()
        with torch.cuda.stream(t):
            assert handle(sl.current_stream()) == t.cuda_stream
        assert handle(sl.current_stream()) == s.cuda_stream


def test_a_device_the_process_does_not_have_is_refused_by_name(sl, torch):
    count = torch.cuda.device_count()
    with pytest.raises(ValueError, match=f"device {count} does not exist; expected 0..{count - 1}"):
        sl.current_stream(count)
    with pytest.raises(ValueError, match="does not exist"):
        sl.use(torch.cuda.default_stream(), device=count).__enter__()
    if count >= 2:
        with torch.cuda.device(0):
            s = torch.cuda.Stream()
        with pytest.raises(ValueError, match="belongs to device 0, not device 1"):
            sl.use(s, device=1).__enter__()


def test_inside_use_of_a_torch_stream_torch_sees_that_stream(sl, torch):
    s = torch.cuda.Stream()
    before = torch.cuda.current_stream()
    with sl.use(s):
        assert torch.cuda.current_stream() == s  # the stream itself, not an external stream of its handle
        assert handle(sl.current_stream()) == s.cuda_stream
    assert torch.cuda.current_stream() == before


def test_the_python_switch_reports_at_a_modules_check_sites(sl, torch, current_module, capfd):
    s = torch.cuda.Stream()  # not the current stream
    sl.set_current_stream_check(True)
    try:
        current_module.view_arg(s)
    finally:
        sl.set_current_stream_check(False)
    assert "is not the current stream" in capfd.readouterr().err


# Run in a process of its own: torch's dedicated provider (libtorch_cuda's C shim) is unregistered
# there, so that only the provider over torch.Tensor's DLPack C exchange API can answer for torch.
_DLPACK_ROUTE = r"""
import sys

import package_c_api
import torch
import streamlike

if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
    print(f"torch {torch.__version__} has no torch.Tensor.__dlpack_c_exchange_api__ (DLPack 1.3)")
    sys.exit(77)
assert "torch" in streamlike.current_stream_providers()  # found first, so never looked for again

package_api = package_c_api.package_api(streamlike)
assert package_api.layout_version == 2, package_api.layout_version
api = package_api.current_stream.contents
assert api.unregister_provider(b"torch") == 0  # STREAMLIKE_CURRENT_STREAM_REGISTERED
assert streamlike.register_dlpack_exchange_provider(torch.Tensor) == "dlpack:torch"
names = streamlike.current_stream_providers()
assert "torch" not in names and "dlpack:torch" in names, names

s = torch.cuda.Stream()
assert streamlike.current_stream().__cuda_stream__()[1] in (0, 1)  # torch's default stream
with torch.cuda.stream(s):
    assert streamlike.current_stream().__cuda_stream__()[1] == s.cuda_stream, "the DLPack route did not answer"
    assert streamlike.current_stream(torch.cuda.current_device()).__cuda_stream__()[1] == s.cuda_stream
x = streamlike.Stream.create()
with streamlike.use(x):
    assert streamlike.current_stream().handle == x.handle  # torch read-only here: the scope answers
    with torch.cuda.stream(s):  # torch's own block inside the scope, seen through DLPack
        assert streamlike.current_stream().__cuda_stream__()[1] == s.cuda_stream
    assert streamlike.current_stream().handle == x.handle
print("the DLPack exchange route answered torch's current stream")
"""


def test_torch_answers_through_its_dlpack_exchange_api_without_the_dedicated_provider(sl, torch, installed):
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))  # package_c_api
    paths = (installed.site, here, os.environ.get("PYTHONPATH"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))
    done = subprocess.run([sys.executable, "-c", _DLPACK_ROUTE], env=env, capture_output=True, text=True, timeout=300)
    if done.returncode == 77:
        pytest.skip(done.stdout.strip())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the DLPack exchange route answered" in done.stdout
