"""References the casters hold for C++: held while C++ holds a stream, released after, never
leaked (also on a CUDA error while making a shared_stream, and at interpreter exit).

Through the nanobind and pybind11 test modules (fixture `bridge`, conftest.py), with the fake
stream objects of exporters.py: no GPU needed.
"""

import os
import subprocess
import sys
import textwrap
import warnings

import pytest
from exporters import (
    BAD_RESULTS,
    PER_THREAD,
    AttributeExporter,
    Boom,
    Exporter,
    FreshRaisingExporter,
    NotAStream,
    PropertyRaisingExporter,
    refcounts,
    swallow,
)

# --- references: held while C++ holds, released after, never leaked ------------------------------


def test_view_conversion_keeps_no_reference(bridge):
    e = Exporter((0, 0x7000))
    before = refcounts(e, e.info)
    for _ in range(1000):
        bridge.handle_of(e)
    after = refcounts(e, e.info)
    assert after == before


def test_failed_conversions_leak_nothing(bridge):
    # Every error path: exporter and the object it returned keep their counts.
    cases = [(Exporter(r), err) for r, err, _ in BAD_RESULTS]
    cases += [(FreshRaisingExporter(), Boom), (NotAStream(), TypeError), (PropertyRaisingExporter(), KeyError)]
    for exporter, error in cases:
        # The returned object too, where it is one of ours (small ints, None and interned strings
        # are shared by the whole interpreter, so their counts move for other reasons).
        info = getattr(exporter, "info", None)
        watched = [exporter] + ([info] if isinstance(info, (tuple, list)) else [])
        before = refcounts(*watched)
        for function in (bridge.handle_of, bridge.handle_of_shared, bridge.handle_of_optional_shared):
            for _ in range(50):
                swallow(error, function, exporter)
        after = refcounts(*watched)
        assert after == before, f"{type(exporter).__name__} {info!r}"


def test_deprecated_form_leaks_nothing(bridge):
    e = AttributeExporter((0, 0))
    before = refcounts(e, e.__cuda_stream__)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for _ in range(100):
            bridge.handle_of(e)
            bridge.handle_of_shared(e)
    after = refcounts(e, e.__cuda_stream__)
    assert after == before


def test_shared_stream_holds_the_exporter_while_cpp_holds_it(bridge):
    e = Exporter((0, 0))
    (base,) = refcounts(e)
    bridge.hold(e)
    assert refcounts(e) == [base + 1]  # the shared_stream kept in C++ owns one reference
    bridge.hold(e)
    assert refcounts(e) == [base + 2]
    assert bridge.held_use_count(0) == 1  # two separate shared_streams, one reference each
    assert bridge.release_held() == 2
    assert refcounts(e) == [base]  # released with the last C++ reference


def test_shared_stream_parameter_releases_after_the_call(bridge):
    e = Exporter((0, 2))
    (base,) = refcounts(e)
    for _ in range(1000):
        assert bridge.handle_of_shared(e) == PER_THREAD
        assert bridge.use_count_of(e) == 1  # the caster's shared_stream is moved into the parameter
    assert refcounts(e) == [base]


def test_release_from_a_thread_python_does_not_know(bridge):
    # The last C++ reference dropped on a plain std::thread: the reference's destructor takes the
    # GIL itself (the binding released it while the thread ran).
    e = Exporter((0, 1))
    (base,) = refcounts(e)
    for _ in range(10):
        bridge.hold(e)
    assert refcounts(e) == [base + 10]
    assert bridge.release_held_on_other_thread() == 10
    assert refcounts(e) == [base]


def test_reused_blocks_each_hold_their_own_exporter(bridge):
    # A dropped shared_stream's block is kept for the next one (python/detail/reference_block.hpp):
    # made and dropped, reused, made anew while the kept one is in use, dropped on a thread Python
    # does not know; each shared_stream views its own stream and holds its own exporter.
    a, b, c = Exporter((0, 0x1000)), Exporter((0, 0x2000)), Exporter((0, 0x3000))
    base = refcounts(a, b, c)
    assert bridge.handle_of_shared(a) == 0x1000
    held_b = bridge.pass_through(b)
    held_c = bridge.pass_through(c)
    assert (held_b.handle, held_c.handle) == (0x2000, 0x3000)
    assert refcounts(a, b, c) == [base[0], base[1] + 1, base[2] + 1]
    del held_b, held_c
    assert refcounts(a, b, c) == base
    for held in (a, b, c, a):
        bridge.hold(held)
    del held
    assert bridge.release_held_on_other_thread() == 4
    assert refcounts(a, b, c) == base
    assert [bridge.handle_of_shared(e) for e in (c, b, a)] == [0x3000, 0x2000, 0x1000]
    assert refcounts(a, b, c) == base


# --- C++ errors while making a shared_stream ------------------------------------------------------


def test_cuda_error_becomes_runtime_error_and_leaks_nothing(bridge):
    # A shared_stream made by keep_alive asks CUDA about the stream on its first query (here
    # stream_device), which fails without a GPU: streamlike::error must arrive as RuntimeError
    # naming the CUDA call, and the reference taken to the exporter must not outlive the failure.
    # On a machine with a GPU a garbage handle could crash the driver, so this runs only without.
    if bridge.cuda_device_count() > 0:
        pytest.skip("a GPU is present: fake stream handles must not reach CUDA")
    e = Exporter((0, 0x1234))
    (base,) = refcounts(e)
    with pytest.raises(RuntimeError, match="cudaStreamGetDevice"):
        bridge.stream_device(e)
    for _ in range(20):
        swallow(RuntimeError, bridge.stream_device, e)
    after = refcounts(e)
    assert after == [base]
    with pytest.raises(RuntimeError, match="shared_stream::create"):
        bridge.create_stream()


# --- interpreter finalization ---------------------------------------------------------------------

FINALIZATION_SCRIPT = textwrap.dedent("""
    import sys, threading
    import {module} as m

    class E:
        def __cuda_stream__(self):
            return (0, 1)

    # C++ statics destroyed by the C++ runtime after Python has finalized: the reference must be
    # skipped, not decref'd (decref'ing would touch a dead interpreter).
    m.hold_until_exit(E())
    # Held in C++ and by a module global: released while the interpreter finalizes.
    m.hold(E())
    keep = m.pass_through(E())
    # A daemon thread still holding a Stream when the interpreter goes away.
    def worker(s):
        threading.Event().wait()
    threading.Thread(target=worker, args=(m.pass_through(E()),), daemon=True).start()
    print("ok", flush=True)
""")


def test_references_are_skipped_safely_at_interpreter_exit(bridge):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.run(
        [sys.executable, "-c", FINALIZATION_SCRIPT.format(module=bridge.__name__)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
    assert proc.stderr == ""
