"""streamlike.current_stream, streamlike.use and streamlike.CURRENT without a GPU: fake protocol
objects, an explicit device (the current device cannot be read without a driver), no framework
loaded (streamlike's own provider alone). What every framework sees under each setter, nested,
raising, on other threads and devices is the conformance matrix's (current_stream_matrix.py)."""

import pickle
import threading

import fake_cupy as fake_cupy_module
import pytest


class FakeStream:
    def __init__(self, address):
        self.address = address

    def __cuda_stream__(self):
        return (0, self.address)


@pytest.fixture
def sl(streamlike):
    if not hasattr(streamlike, "use"):
        pytest.fail(
            "the package lacks streamlike.use: python/streamlike/use.cpp is not built into _streamlike"
            " (add_current_stream(m)) or _use.py is not imported by __init__.py"
        )
    return streamlike


@pytest.fixture
def without_cuda(sl):
    """Skips where a CUDA device is usable: a scope asks its stream's device (a stream is made
    current only on its own device), which the fake handles here do not have; without a driver or
    device the device is taken as given. gpu_current_stream.py covers real streams."""
    try:
        sl.current_stream()
    except Exception:  # noqa: BLE001 - no driver or no device: the fakes never reach CUDA
        return
    pytest.skip("a CUDA device is usable: scopes would ask the fake handles' device")


def handle(view):
    return view.__cuda_stream__()[1]


def test_without_a_scope_the_current_stream_is_the_default_one(sl):
    assert sl.current_stream_providers()[-1] == "streamlike"
    view = sl.current_stream(0)
    assert isinstance(view, sl.StreamView)
    assert handle(view) in (0, 1)  # the legacy default stream
    assert sl.current_stream(device=0) == view


def test_the_default_stream_outside_any_scope_is_from_address_0_with_one_handle_and_repr(sl):
    outside = sl.current_stream(0)  # no scope and no framework: the default stream
    legacy = sl.from_address(0)  # the legacy default stream (docs: the same stream)
    assert outside == legacy and not outside != legacy and hash(outside) == hash(legacy)
    assert handle(outside) == handle(legacy) == 1 and outside.handle == 1
    assert repr(outside).split()[1] == repr(legacy).split()[1] == "handle=0x1", (repr(outside), repr(legacy))
    assert outside == sl.from_address(1) == sl.StreamView(FakeStream(0))  # (0, 0): the legacy default stream
    assert outside != sl.from_address(2)  # the per-thread default stream is another stream
    assert {outside, legacy, sl.from_address(1)} == {legacy}


@pytest.mark.usefixtures("without_cuda")
def test_use_makes_a_stream_current_and_restores_it(sl):
    before = handle(sl.current_stream(0))
    with sl.use(FakeStream(0x1000), device=0) as block:
        assert handle(sl.current_stream(0)) == 0x1000
        assert block.device == 0
        with sl.use(FakeStream(0x2000), device=0):
            assert handle(sl.current_stream(0)) == 0x2000
        assert handle(sl.current_stream(0)) == 0x1000
        assert handle(sl.current_stream(1)) == before  # another device: untouched
    assert handle(sl.current_stream(0)) == before


@pytest.mark.usefixtures("without_cuda")
def test_a_block_is_entered_once(sl):
    block = sl.use(FakeStream(0x5000), device=0)
    with block:
        with pytest.raises(RuntimeError, match="already entered"):
            block.__enter__()


def test_bad_arguments_are_refused_by_name(sl):
    with pytest.raises(TypeError, match="__cuda_stream__"):
        sl.use(7)
    with pytest.raises(ValueError, match="device must be"):
        sl.use(FakeStream(0x6000), device=-1)
    with pytest.raises(TypeError, match="device must be None"):
        sl.current_stream("cuda")
    with pytest.raises(ValueError, match="device must be None"):
        sl.current_stream(-3)
    with pytest.raises(TypeError, match="at most 1 argument"):
        sl.current_stream(0, 1)


@pytest.mark.usefixtures("without_cuda")
def test_conflicts_are_empty_when_one_provider_answers(sl):
    assert sl.current_stream_conflicts(0) == []
    with sl.use(FakeStream(0x7000), device=0):
        assert sl.current_stream_conflicts(0) == []


def test_current_is_one_object_that_pickles_to_itself(sl):
    assert repr(sl.CURRENT) == "streamlike.CURRENT"
    assert pickle.loads(pickle.dumps(sl.CURRENT)) is sl.CURRENT
    assert type(sl.CURRENT).__streamlike_current_stream__ is True


def test_the_check_is_switched_from_python(sl):
    assert not sl.current_stream_check_enabled()
    sl.set_current_stream_check(True)
    try:
        assert sl.current_stream_check_enabled()
    finally:
        sl.set_current_stream_check(False)
    assert not sl.current_stream_check_enabled()


@pytest.fixture
def current_module(sl):
    import importlib
    import os
    import sys

    where = os.environ.get("STREAMLIKE_BRIDGE_MODULES_DIR")
    if not where or not os.path.isdir(where):
        pytest.skip("the bridge suite's test modules were not built")
    if where not in sys.path:
        sys.path.append(where)
    return importlib.import_module("streamlike_current_nb_test")


@pytest.mark.usefixtures("without_cuda")
def test_a_module_sees_use_blocks_through_the_package(sl, current_module):
    # The module has its own copy of libstreamlike and no framework is loaded: its stream_or_current
    # parameter asks the package when its own copy names no stream. It asks on the current device.
    try:
        current_module.current_address(-1)
    except RuntimeError:
        pytest.skip("reading the current device needs a CUDA driver")
    with sl.use(FakeStream(0x8000), device=0):  # device 0: current in a process that chose none
        assert current_module.stream_arg(sl.CURRENT) == (0x8000, True)
        assert current_module.stream_arg() == (0x8000, True)


@pytest.mark.usefixtures("without_cuda")
def test_a_linked_module_sees_use_blocks_in_its_own_cpp_calls(sl, current_module):
    # The module's copy of streamlike and the package's share one registry: linking registers no
    # provider standing for the package, once or twice.
    assert current_module.link_package()
    assert current_module.link_package()
    names = current_module.providers()
    assert "streamlike-package" not in names and names.count("streamlike") == 1, names
    assert current_module.current_address(0) == 0
    with sl.use(FakeStream(0x9000), device=0):
        assert current_module.current_address(0) == 0x9000
    assert current_module.current_address(0) == 0


def _on_a_thread(body):
    """Runs body() on a thread of its own and re-raises what it raised: what a leaked block leaves
    current stays in that thread's thread-locals."""
    failure = []

    def run():
        try:
            body()
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            failure.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if failure:
        raise failure[0]


@pytest.mark.usefixtures("without_cuda")
def test_a_block_collected_while_entered_keeps_its_stream_current_and_alive(sl):
    import gc
    import weakref

    def body():
        stream = FakeStream(0xA000)
        alive = weakref.ref(stream)
        block = sl.use(stream, device=0)
        block.__enter__()
        del stream, block
        gc.collect()
        # Still current in this thread's frameworks: neither restored elsewhere nor freed.
        assert alive() is not None
        assert handle(sl.current_stream(0)) == 0xA000

    _on_a_thread(body)


@pytest.mark.usefixtures("without_cuda")
def test_a_block_left_on_another_thread_keeps_its_stream_alive(sl):
    import gc
    import weakref

    entered = threading.Event()
    left = threading.Event()
    shared = {}

    def body():
        stream = FakeStream(0xB000)
        shared["alive"] = weakref.ref(stream)
        shared["block"] = sl.use(stream, device=0)
        shared["block"].__enter__()
        del stream
        entered.set()
        left.wait()
        assert handle(sl.current_stream(0)) == 0xB000  # the entering thread's stream stays set

    def run():
        try:
            body()
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            shared["failure"] = e
            entered.set()

    t = threading.Thread(target=run)
    t.start()
    entered.wait()
    try:
        with pytest.raises(RuntimeError, match="left on another thread"):
            shared["block"].__exit__(None, None, None)
        assert handle(sl.current_stream(0)) != 0xB000  # this thread's streams were not changed
    finally:
        left.set()
        t.join()
    if "failure" in shared:
        raise shared["failure"]
    del shared["block"]
    gc.collect()
    assert shared["alive"]() is not None


def test_the_python_switch_of_the_check_reaches_a_modules_check_sites(sl, current_module):
    # The module's own copy has its own switch (off); Python's switch is the package's.
    assert not current_module.check_active()
    sl.set_current_stream_check(True)
    try:
        assert current_module.check_active()
    finally:
        sl.set_current_stream_check(False)
    assert not current_module.check_active()


def test_a_framework_joins_the_package_from_c_through_its_capsule(sl, current_module):
    # The capsule's table (streamlike/c/current_stream_provider.h): major 1, any minor.
    major, minor = current_module.package_table_version()
    assert major == 1 and minor >= 0, (major, minor)
    assert current_module.join_package(True, 0xC000) == 0  # registered
    try:
        assert "module-framework" in sl.current_stream_providers()
        assert handle(sl.current_stream(0)) == 0xC000  # the package asks it now
        assert current_module.join_package(True, 0xC000) == 2  # the name is taken
    finally:
        assert current_module.join_package(False, 0) == 0
    assert "module-framework" not in sl.current_stream_providers()
    assert handle(sl.current_stream(0)) in (0, 1)


@pytest.mark.usefixtures("without_cuda")
def test_a_stream_is_set_and_restored_in_the_package_from_c(sl, current_module):
    status, inside, after = current_module.set_in_package(0, 0xD000)
    assert status == 0
    assert inside == 0xD000
    assert after in (0, 1)
    assert handle(sl.current_stream(0)) in (0, 1)


# --- CuPy's provider, against a stand-in for the cupy module ------------------------------------
# These run last: once `cupy` is in sys.modules the package registers CuPy's provider for the rest
# of the process (the stand-in then stays in sys.modules).


_fake_cupy = fake_cupy_module.make(lambda: 0)  # without CUDA: device 0 is current
_FakeCupyStream = _fake_cupy.cuda.Stream


@pytest.fixture
def fake_cupy(sl):
    import sys

    if "cupy" not in sys.modules:
        sys.modules["cupy"] = _fake_cupy
        sys.modules["cupy.cuda"] = _fake_cupy.cuda
    cuda = sys.modules["cupy.cuda"]
    assert cuda is _fake_cupy.cuda, "the real CuPy is loaded"
    assert "cupy" in sl.current_stream_providers()
    return cuda


@pytest.mark.usefixtures("without_cuda")
def test_cupy_gets_back_its_very_stream_object_and_keeps_nothing_alive(sl, fake_cupy):
    import gc
    import weakref

    mine = _FakeCupyStream(0xE000).use()  # the caller's own CuPy stream
    seen = []
    given = FakeStream(0xE100)
    with sl.use(given, device=0):
        inside = fake_cupy.get_current_stream(0)
        # CuPy 14's Stream.from_external, handed the block's own stream object (in a StreamView)
        assert isinstance(inside, _FakeCupyStream) and inside.ptr == 0xE100
        assert isinstance(inside.external, sl.StreamView) and inside.external.exporter is given
        scope_object = weakref.ref(inside)
        del inside
        # 70 distinct CuPy streams current in turn inside the block, each read by streamlike.
        for i in range(70):
            s = _FakeCupyStream(0xF000 + i).use()
            assert handle(sl.current_stream(0)) == 0xF000 + i
            seen.append(weakref.ref(s))
            del s
        _FakeCupyStream(0xE100).use()
    assert fake_cupy.get_current_stream(0) is mine  # the very object, not a stream of its handle
    del given
    gc.collect()
    assert scope_object() is None  # the scope's object did not outlive the scope
    assert all(r() is None for r in seen)  # nor did any stream streamlike read
    _FakeCupyStream.null.use()


@pytest.mark.usefixtures("without_cuda")
def test_cupy_is_handed_its_null_stream_for_the_legacy_default_stream(sl, fake_cupy):
    before = _FakeCupyStream(0xE200).use()
    with sl.use(FakeStream(0), device=0):  # (0, 0): the legacy default stream
        assert fake_cupy.get_current_stream(0) is _FakeCupyStream.null
    assert fake_cupy.get_current_stream(0) is before
    _FakeCupyStream.null.use()


@pytest.mark.usefixtures("without_cuda")
def test_cupy_gets_back_the_stream_of_its_own_block_and_the_one_it_used(sl, fake_cupy):
    # Left inside CuPy's own block, the use block's exit leaves that block's stream current (CuPy's
    # exit does); after a use() of CuPy's, the very object used (streamlike puts it back).
    outer = _FakeCupyStream(0xE250)
    with outer:
        with sl.use(FakeStream(0xE260), device=0):
            assert handle(sl.current_stream(0)) == 0xE260
        assert fake_cupy.get_current_stream(0) is outer
        used = _FakeCupyStream(0xE270).use()  # inside CuPy's block: not the top of its stack
        with sl.use(FakeStream(0xE280), device=0):
            assert handle(sl.current_stream(0)) == 0xE280
        assert fake_cupy.get_current_stream(0) is used
    _FakeCupyStream.null.use()


@pytest.mark.usefixtures("without_cuda")
def test_cupy_block_inside_use_wins_whatever_it_names_and_ends_back_on_the_scopes_stream(sl, fake_cupy):
    before = fake_cupy.get_current_stream(0)
    with sl.use(FakeStream(0xE300), device=0):
        assert handle(sl.current_stream(0)) == 0xE300
        outer = fake_cupy.get_current_stream(0)
        with _FakeCupyStream.null:
            assert handle(sl.current_stream(0)) in (0, 1)
        # CuPy's block exit makes the top of its block stack current: the scope's stream
        assert fake_cupy.get_current_stream(0) is outer
        assert handle(sl.current_stream(0)) == 0xE300
        with _FakeCupyStream(0xE310):
            assert handle(sl.current_stream(0)) == 0xE310
        assert handle(sl.current_stream(0)) == 0xE300
    assert fake_cupy.get_current_stream(0) is before


@pytest.mark.usefixtures("without_cuda")
def test_a_cpp_scope_in_a_linked_module_sets_cupy_and_the_package_too(sl, fake_cupy, current_module):
    assert current_module.link_package()
    before = _FakeCupyStream(0xE400).use()
    seen = current_module.call_inside_scope(
        FakeStream(0xE500), lambda: (fake_cupy.get_current_stream(0).ptr, handle(sl.current_stream(0)))
    )
    assert seen == (0xE500, 0xE500)  # CuPy and the package's current_stream() see the C++ scope
    assert fake_cupy.get_current_stream(0) is before
    _FakeCupyStream.null.use()


@pytest.mark.usefixtures("without_cuda")
def test_a_stream_cupy_refuses_fails_the_block_with_cupys_error_as_its_cause(sl, fake_cupy):
    before = _FakeCupyStream(0xE800).use()
    fake_cupy.refused.add(0xE810)
    try:
        with pytest.raises(RuntimeError, match="provider 'cupy' failed") as failed:
            with sl.use(FakeStream(0xE810), device=0):
                pytest.fail("the block was entered although CuPy refused its stream")
    finally:
        fake_cupy.refused.discard(0xE810)
    cause = failed.value.__cause__
    assert isinstance(cause, RuntimeError) and "fake CuPy refuses the stream 0xe810" in str(cause), repr(cause)
    assert cause.__traceback__ is not None  # where in CuPy it was raised
    assert fake_cupy.get_current_stream(0) is before  # nothing was left set
    assert handle(sl.current_stream(0)) == 0xE800
    _FakeCupyStream.null.use()


# Each CuPy flavour in an interpreter of its own (the package resolves CuPy's functions once per
# process), under -W error: a warning of CuPy's from a streamlike call would be an exception there.
_CUPY_FLAVOUR_UNDER_W_ERROR = r"""
import sys, warnings
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import fake_cupy
import streamlike as sl

cupy = fake_cupy.make(lambda: 0, flavour=sys.argv[3])
sys.modules["cupy"], sys.modules["cupy.cuda"] = cupy, cupy.cuda
assert "cupy" in sl.current_stream_providers()
filters = list(warnings.filters)


class Protocol:
    def __init__(self, address):
        self.address = address

    def __cuda_stream__(self):
        return (0, self.address)


for given in (Protocol(0xD000), sl.from_address(0xD100)):
    with sl.use(given, device=0):
        inside = cupy.cuda.get_current_stream(0)
        assert inside.ptr == given.__cuda_stream__()[1], hex(inside.ptr)
        external = getattr(inside, "external", None)
        made_from_given = external is given or getattr(external, "exporter", None) is given
        print("from_external" if made_from_given else type(inside).__name__)
    assert cupy.cuda.get_current_stream(0) is cupy.cuda.Stream.null
assert warnings.filters == filters, "the warning filters were changed"
assert cupy.cuda.streams_made() == 2
if sys.argv[3] != "cupy13":
    try:
        cupy.cuda.ExternalStream(0xD200, 0)  # CuPy's own warning still reaches its own callers
    except DeprecationWarning:
        print("ExternalStream still warns")
print("done")
"""


@pytest.mark.usefixtures("without_cuda")
@pytest.mark.parametrize(
    "flavour, made_by",
    [("cupy14", "from_external"), ("deprecated_only", "ExternalStream"), ("cupy13", "ExternalStream")],
)
def test_cupy_streams_are_made_without_a_warning_under_w_error(sl, installed, flavour, made_by):
    import os
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    result = subprocess.run(
        [installed.python or sys.executable, "-W", "error", "-c", _CUPY_FLAVOUR_UNDER_W_ERROR]
        + [installed.site, here, flavour],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.split("\n")
    assert lines[:2] == [made_by, made_by], result.stdout
    assert ("ExternalStream still warns" in lines) == (flavour != "cupy13"), result.stdout
    assert lines[-2:] == ["done", ""], result.stdout


@pytest.mark.usefixtures("without_cuda")
def test_inside_use_of_a_torch_stream_torch_is_handed_that_very_object(sl):
    # A stand-in for torch (only what use() touches): torch.cuda.Stream and torch.cuda.set_stream,
    # which makes a stream object current with its own stream id (torch.cuda.current_stream() == s).
    import sys
    import types

    made_current = []

    class Stream:
        def __init__(self, ptr):
            self.ptr = ptr

        def __cuda_stream__(self):
            return (0, self.ptr)

    fake = types.ModuleType("torch")
    fake.cuda = types.SimpleNamespace(Stream=Stream, set_stream=made_current.append)
    saved = sys.modules.get("torch")
    sys.modules["torch"] = fake
    try:
        s = Stream(0xE600)
        with sl.use(s, device=0):
            assert made_current == [s]
            assert handle(sl.current_stream(0)) == 0xE600
        with sl.use(FakeStream(0xE700), device=0):  # not a torch stream: torch's setter is not called
            pass
        assert made_current == [s]
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved
