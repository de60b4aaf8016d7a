"""The owning exchange in Python (docs/owned-stream-abi.md): `__cuda_stream_owned__()` and its
"cuda_stream_owned" capsule, between two extension modules built on streamlike, one with nanobind
and one with pybind11 (owned_stream_functions.hpp). Fake streams: each module's structs count their
releases, so a leak or a double release shows; no GPU needed.
"""

import gc
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import owned_module_pairs


@pytest.fixture(params=owned_module_pairs(), ids=lambda p: f"{p[0].binding}-to-{p[1].binding}")
def pair(request):
    producer, consumer = request.param
    yield producer, consumer
    producer.release_held()
    consumer.release_held()


class Released:
    """Counts the producer's releases over a block: `with Released(m) as r: ...; r.count`."""

    def __init__(self, module):
        self.module = module

    def __enter__(self):
        gc.collect()
        self.made, self.released = self.module.made(), self.module.released()
        return self

    def __exit__(self, *exc):
        gc.collect()

    @property
    def count(self):
        return self.module.released() - self.released

    @property
    def new(self):
        return self.module.made() - self.made


def test_stream_objects_offer_a_capsule(pair):
    producer, _ = pair
    with Released(producer) as r:
        s = producer.make_fake_stream(0x5000)
        cap = s.__cuda_stream_owned__()
        assert type(cap).__name__ == "PyCapsule"
        assert "cuda_stream_owned" in repr(cap)
        assert s.use_count == 2  # the capsule's struct holds one reference
        del cap  # dropped unconsumed: its destructor releases the struct
        assert s.use_count == 1
        del s
    assert r.count == 1


def test_a_view_offers_none():
    from conftest import import_bridge

    bridge = import_bridge("streamlike_nb_test")
    assert bridge.view_of_address(0x1234).__cuda_stream_owned__() is None


def test_shared_stream_crosses_modules_through_the_capsule(pair):
    producer, consumer = pair
    with Released(producer) as r:
        s = producer.make_fake_stream(0x5000)
        base = sys.getrefcount(s)
        consumer.hold(s)
        assert sys.getrefcount(s) == base  # no Python object kept alive
        assert s.use_count == 2  # one stream, shared
        del s
        gc.collect()
        assert consumer.held_handle() == 0x5000  # C++ still has it after Python let go
        assert r.count == 0
        consumer.release_held()
    assert r.count == 1


def test_last_drop_on_a_cpp_thread_needs_no_gil(pair):
    producer, consumer = pair
    with Released(producer) as r:
        consumer.hold(producer.make_fake_stream(0x5000))
        gc.collect()
        # The dropping thread never touched Python, and this thread keeps the GIL meanwhile.
        assert consumer.drop_held_on_thread_keeping_gil(5.0) is True
    assert r.count == 1


def test_the_borrowed_path_would_need_the_gil(pair):
    # The contrast: an object without __cuda_stream_owned__ is kept alive, and releasing it takes the GIL.
    _, consumer = pair

    class Borrowed:
        def __cuda_stream__(self):
            return (0, 0x5000)

    consumer.hold(Borrowed())
    assert consumer.drop_held_on_thread_keeping_gil(0.2) is False


def test_none_falls_back_to_borrowing(pair):
    _, consumer = pair

    class NotOwning:
        def __cuda_stream_owned__(self):
            return None

        def __cuda_stream__(self):
            return (0, 0x5000)

    obj = NotOwning()
    base = sys.getrefcount(obj)
    consumer.hold(obj)
    assert consumer.held_handle() == 0x5000
    assert sys.getrefcount(obj) == base + 1  # borrowed: kept alive
    consumer.release_held()
    assert sys.getrefcount(obj) == base


class Returns:
    """An exporter whose __cuda_stream_owned__() returns whatever it was given (the same object each
    time, so a capsule can be offered twice)."""

    def __init__(self, value):
        self.value = value

    def __cuda_stream_owned__(self):
        return self.value


def test_a_capsule_consumed_twice_is_a_value_error(pair):
    producer, consumer = pair
    with Released(producer) as r:
        twice = Returns(producer.make_capsule(0x5000, 1, "cuda_stream_owned"))
        consumer.hold(twice)
        assert consumer.held_handle() == 0x5000
        with pytest.raises(ValueError, match="consumed already"):
            consumer.hold(twice)
        assert consumer.held_handle() == 0x5000  # the failed call changed nothing
        del twice
        consumer.release_held()
    assert r.new == 1 and r.count == 1


def test_a_capsule_of_another_name_is_a_type_error(pair):
    producer, consumer = pair
    with Released(producer) as r:
        with pytest.raises(TypeError, match="expected a PyCapsule named 'cuda_stream_owned', got one named 'dltensor'"):
            consumer.hold(Returns(producer.make_capsule(0x5000, 1, "dltensor")))
    assert r.new == 1 and r.count == 1  # its own destructor released it


def test_an_unknown_major_version_is_a_value_error(pair):
    producer, consumer = pair
    with Released(producer) as r:
        with pytest.raises(ValueError, match="unknown major version 2.0"):
            consumer.hold(Returns(producer.make_capsule(0x5000, 2, "cuda_stream_owned")))
    assert r.new == 1 and r.count == 1  # left unconsumed: the capsule released it


def test_not_a_capsule_is_a_type_error(pair):
    _, consumer = pair
    with pytest.raises(TypeError, match="expected a PyCapsule named 'cuda_stream_owned'.*got a int object"):
        consumer.hold(Returns(5))


def test_an_exception_inside_the_method_propagates(pair):
    _, consumer = pair

    class Raises:
        def __cuda_stream_owned__(self):
            raise KeyError("from the exporter")

    with pytest.raises(KeyError, match="from the exporter"):
        consumer.hold(Raises())


def test_interpreter_exit_while_cpp_holds_a_stream(pair):
    producer, consumer = pair
    script = textwrap.dedent(f"""
        import {producer.__name__} as producer, {consumer.__name__} as consumer

        class Borrowed:
            def __cuda_stream__(self):
                return (0, 0x7000)

        producer.set_report_releases(True)
        consumer.hold_until_exit(producer.make_fake_stream(0x6000))  # owned: released at exit
        consumer.hold(Borrowed())  # borrowed: its Python reference is skipped during finalization
        print("exiting", flush=True)
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stderr
    assert "exiting" in done.stdout
    assert "fake stream 0x6000 released" in done.stderr
