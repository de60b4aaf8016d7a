"""The stream_or_current parameter and streamlike::current_stream() in an extension module, without
a GPU (fake protocol objects; the current device cannot be read without a driver). Both bindings."""

import importlib
import os

import conftest  # noqa: F401  (puts the build folder on sys.path when run by hand)
import pytest

NAMES = {"streamlike_current_nb_test": "nanobind", "streamlike_current_pb_test": "pybind11"}


def _names():
    names = os.environ.get("STREAMLIKE_PY_CURRENT_MODULES")
    return [n for n in names.split(",") if n] if names else list(NAMES)


@pytest.fixture(params=_names(), ids=lambda n: NAMES.get(n, n))
def current(request):
    try:
        return importlib.import_module(request.param)
    except ImportError as e:
        pytest.fail(f"cannot import the test module {request.param} ({e}); build it first")


class FakeStream:
    def __init__(self, address):
        self.address = address

    def __cuda_stream__(self):
        return (0, self.address)


class CurrentStream:
    """Shaped as streamlike.CURRENT (the casters know it by this attribute), without the package."""

    __streamlike_current_stream__ = True


def _device_present(current):
    try:
        current.current_address(-1)
        return True
    except RuntimeError:
        return False


def test_an_explicit_stream_is_that_stream(current):
    assert current.stream_arg(FakeStream(0x1234)) == (0x1234, False)
    assert current.stream_arg(stream=FakeStream(0x5678)) == (0x5678, False)


def test_an_int_is_not_a_stream(current):
    with pytest.raises(TypeError, match="__cuda_stream__"):
        current.stream_arg(7)


@pytest.mark.parametrize("how", ["left out", "None", "CURRENT"])
def test_no_stream_means_the_current_one(current, how):
    def call():
        if how == "left out":
            return current.stream_arg()
        return current.stream_arg(None if how == "None" else CurrentStream())

    if _device_present(current):
        address, was_current = call()
        assert was_current
        assert address == current.current_address(-1)
    else:
        with pytest.raises(RuntimeError, match="current_stream: cudaGetDevice"):
            call()


def test_current_given_to_a_plain_stream_parameter_is_the_current_stream(current):
    # Any stream argument read by the casters takes the sentinel, not only stream_or_current.
    if _device_present(current):
        assert current.view_arg(CurrentStream()) == current.current_address(-1)
    else:
        with pytest.raises(RuntimeError, match="current_stream: cudaGetDevice"):
            current.view_arg(CurrentStream())
    assert current.view_arg(FakeStream(0x4321)) == 0x4321


def test_an_object_only_named_like_the_sentinel_is_not_it(current):
    class CurrentStream:  # same name, no marker attribute
        pass

    with pytest.raises(TypeError):
        current.stream_arg(CurrentStream())


def test_without_frameworks_only_streamlikes_provider_answers(current):
    # Neither torch nor tvm-ffi is loaded in this process.
    assert current.providers() == ["streamlike"]
    assert current.current_address(0) == 0
    assert current.conflicts(0) == []


def test_a_bad_device_is_refused_by_name(current):
    with pytest.raises(ValueError, match="device must be"):
        current.current_address(-5)


def test_only_a_thread_with_a_thread_state_may_call_python(current):
    # The providers that run Python (CuPy's, the package's) ask this; PyGILState_Check would answer
    # yes on every thread once a subinterpreter exists.
    assert current.can_call_python_here_and_elsewhere() == (True, False)
    interpreters = None
    for name in ("_interpreters", "_xxsubinterpreters"):
        try:
            interpreters = importlib.import_module(name)
            break
        except ImportError:
            continue
    if interpreters is None:
        pytest.skip("this Python has no subinterpreter module")
    made = interpreters.create()
    try:
        assert current.can_call_python_here_and_elsewhere() == (True, False)
    finally:
        interpreters.destroy(made)
