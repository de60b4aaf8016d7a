"""The owning exchange from Cython (python/streamlike/owned_stream.pxd): a Cython module consumes
the capsule of a C++ stream, and produces owning streams that the nanobind and pybind11 modules'
shared_stream parameters take (owned_stream_cython.pyx). Fake handles: no GPU needed."""

import gc

import pytest
from conftest import import_bridge, owned_module_pairs

cython_module = import_bridge("streamlike_owned_cython_test")
MODULES = sorted({m for pair in owned_module_pairs() for m in pair}, key=lambda m: m.binding)


@pytest.fixture(params=MODULES, ids=lambda m: m.binding)
def module(request):
    yield request.param
    request.param.release_held()


def test_cython_consumes_a_cpp_stream(module):
    before = module.released()
    s = module.make_fake_stream(0x5000)
    facts = cython_module.consume(s)
    assert facts == {"major": 1, "minor": 1, "handle": 0x5000, "has_facts": True, "device": 0, "stream_id": 0x5000}
    assert s.use_count == 1  # released by Cython
    del s
    gc.collect()
    assert module.released() == before + 1


def test_cpp_takes_a_cython_stream_and_drops_it_without_the_gil(module):
    before = cython_module.released()
    module.hold(cython_module.Producer(0x7000))
    gc.collect()
    assert module.held_handle() == 0x7000
    assert cython_module.released() == before
    assert module.drop_held_on_thread_keeping_gil(5.0) is True
    assert cython_module.released() == before + 1


def test_an_unconsumed_cython_capsule_is_released():
    before = cython_module.released()
    cap = cython_module.Producer(0x7000).__cuda_stream_owned__()
    del cap
    gc.collect()
    assert cython_module.released() == before + 1


def test_cython_refuses_misused_capsules(module):
    before = module.released()
    cap = module.make_capsule(0x5000, 1, "cuda_stream_owned")
    assert cython_module.consume_capsule(cap) == 0x5000
    with pytest.raises(ValueError, match="consumed already"):
        cython_module.consume_capsule(cap)
    with pytest.raises(ValueError, match="unknown major version 2.0"):
        cython_module.consume_capsule(module.make_capsule(0x5000, 2, "cuda_stream_owned"))
    with pytest.raises(TypeError, match="got one named 'dltensor'"):
        cython_module.consume_capsule(module.make_capsule(0x5000, 1, "dltensor"))
    del cap
    gc.collect()
    assert module.released() == before + 3
