"""The current-stream provider over DLPack's C exchange API, on a CPU, against a fake framework.

fake_dlpack_exchange.py makes a framework whose tensor type offers ``__dlpack_c_exchange_api__``
(DLPack 1.3: a PyCapsule "dlpack_exchange_api" holding a DLPackExchangeAPI) and nothing else. The
package is the one built against the fake CUDA (two devices). What docs/current-stream.md says
("Providers", dlpack): registered for a type by ``register_dlpack_exchange_provider`` and for
torch.Tensor by the package where no dedicated torch provider is registered; read-only, asked after
every dedicated provider, for kDLCUDA; refused by name where the API is missing or of another
major (walking ``prev_api`` to an older major 1).

    STREAMLIKE_FAKE_CUDA_DEVICES=2 LD_PRELOAD=$B/test/fake_cuda/libstreamlike_fake_cuda.so \\
    STREAMLIKE_FAKE_CUDA_LIBRARY=$B/test/fake_cuda/libstreamlike_fake_cuda.so \\
    STREAMLIKE_PACKAGE_SITE=$B/test/package/fake_cuda python3 -m pytest test/package/test_current_stream_dlpack.py
"""

import os
import sys
import threading

import fake_dlpack_exchange
import pytest

if not os.environ.get("STREAMLIKE_FAKE_CUDA_LIBRARY"):
    pytest.skip(
        "STREAMLIKE_FAKE_CUDA_LIBRARY is not set: this file runs against the preloaded fake CUDA "
        "(meson test package-current-stream-dlpack)",
        allow_module_level=True,
    )

A = 0x7000
B = 0x7100


@pytest.fixture(scope="module")
def sl(streamlike):
    assert os.environ.get("STREAMLIKE_FAKE_CUDA_DEVICES") == "2"
    assert "torch" not in streamlike.current_stream_providers()
    return streamlike


def test_torch_without_a_dedicated_provider_is_asked_through_its_exchange_api(sl):
    # A torch whose libtorch_cuda has no C shim: only torch.Tensor's exchange API knows its stream.
    torch = fake_dlpack_exchange.make("torch")
    sys.modules["torch"] = torch
    try:
        providers = sl.current_stream_providers()  # a package call: the package decides now
        assert "dlpack:torch" in providers, providers
        assert providers[-1] == "streamlike"
        torch.set_stream(0, A)
        assert sl.current_stream(0).handle == A
        torch.set_stream(0, 0)
    finally:
        del sys.modules["torch"]


def test_a_registered_exchange_api_answers_the_current_stream_per_thread_and_device(sl):
    fw = fake_dlpack_exchange.make("fakefw")
    assert sl.register_dlpack_exchange_provider(fw.Tensor) == "dlpack:fakefw"
    providers = sl.current_stream_providers()
    assert providers.index("dlpack:fakefw") == len(providers) - 2, providers  # after every dedicated one
    assert sl.current_stream(0).handle == 1  # nothing named: the legacy default stream
    fw.set_stream(0, A)
    fw.set_stream(1, B)
    assert sl.current_stream(0).handle == A
    assert sl.current_stream(1).handle == B
    assert (2, 0) in fw.asked and (2, 1) in fw.asked  # asked for kDLCUDA, per device
    seen = []
    threading.Thread(target=lambda: seen.append(sl.current_stream(0).handle)).start()
    while not seen:
        pass
    assert seen == [1]  # another thread's stream is its own
    fw.fail_on.add(0)  # a failing call is skipped, not raised
    assert sl.current_stream(0).handle == 1
    fw.fail_on.clear()
    fw.set_stream(0, 0)
    fw.set_stream(1, 0)


def test_inside_use_the_scope_answers_until_the_framework_changes_its_stream(sl):
    fw = fake_dlpack_exchange.make("scopedfw")
    sl.register_dlpack_exchange_provider(fw.Tensor(), name="scoped-dlpack")  # an object of the type serves too
    scope_stream = sl.Stream.create()
    with sl.use(scope_stream):
        assert sl.current_stream().handle == scope_stream.handle  # read-only: the scope cannot set it
        fw.set_stream(0, A)  # the framework's own block, inside the scope
        assert sl.current_stream().handle == A
        fw.set_stream(0, 0)
    assert sl.current_stream().handle == 1


def test_a_type_without_the_api_or_of_another_major_is_refused_by_name(sl):
    with pytest.raises(TypeError, match=r"has no __dlpack_c_exchange_api__"):
        sl.register_dlpack_exchange_provider(int)

    class Wrong:
        __dlpack_c_exchange_api__ = 1234  # the pre-1.3 integer form

    with pytest.raises(TypeError, match=r'not a PyCapsule named "dlpack_exchange_api"'):
        sl.register_dlpack_exchange_provider(Wrong)
    newer = fake_dlpack_exchange.make("newerfw", version=(2, 0))  # major 2, with major 1 behind it
    assert sl.register_dlpack_exchange_provider(newer.Tensor) == "dlpack:newerfw"
    newer.set_stream(0, B)
    assert sl.current_stream(0).handle == B
    newer.set_stream(0, 0)
    lone = fake_dlpack_exchange.make("lonefw", version=(2, 0))
    lone._keep[1][1].header.prev_api = None  # major 2 alone
    with pytest.raises(ValueError, match=r"version 2\.0, with no major 1 in its prev_api chain"):
        sl.register_dlpack_exchange_provider(lone.Tensor)
    no_function = fake_dlpack_exchange.make("emptyfw", with_stream_function=False)
    with pytest.raises(ValueError, match=r"has no current_work_stream"):
        sl.register_dlpack_exchange_provider(no_function.Tensor)
    with pytest.raises(ValueError, match=r"'dlpack:fakefw' is already registered"):
        sl.register_dlpack_exchange_provider(fake_dlpack_exchange.make("fakefw").Tensor)
