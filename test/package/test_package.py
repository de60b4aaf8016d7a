"""The streamlike package without a GPU: install, import, the API, every bad input, the stubs."""

import gc
import os
import shutil
import site
import subprocess
import sys
import weakref

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


class Exporter:
    """A stream object of some library: (0, address) through the CUDA Stream Protocol."""

    def __init__(self, address=0x1234):
        self.address = address

    def __cuda_stream__(self):
        return (0, self.address)


def gpu_present(streamlike):
    try:
        streamlike.Stream.create()
    except RuntimeError:
        return False
    return True


# --- Installing and importing ------------------------------------------------------------------


def test_pip_install_puts_the_package_with_stubs_in_site_packages(installed):
    folder = os.path.join(installed.site, "streamlike")
    files = os.listdir(folder)
    assert "__init__.py" in files and "__init__.pyi" in files and "py.typed" in files
    assert any(f.startswith("_streamlike.") and f.endswith(".so") for f in files), files


def test_the_installed_package_imports_in_its_own_interpreter(installed):
    if installed.python is None:
        pytest.skip("using a package installed with --target (no interpreter of its own)")
    out = subprocess.run(
        [installed.python, "-c", "import streamlike; print(streamlike.__file__)"],
        capture_output=True,
        text=True,
        cwd="/",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith(installed.site)


def test_the_package_ships_the_owned_stream_c_headers(streamlike):
    include = streamlike.get_include()
    for header in ("owned_stream.h", "owned_stream_python.h"):
        assert os.path.isfile(os.path.join(include, "streamlike", "c", header)), header
    assert os.path.isfile(os.path.join(os.path.dirname(streamlike.__file__), "owned_stream.pxd"))


def test_the_package_exports_its_api(streamlike):
    for name in streamlike.__all__:
        assert hasattr(streamlike, name), name
    for cls in (streamlike.Stream, streamlike.StreamView, streamlike.StreamPool, streamlike.Event):
        assert cls.__module__ == "streamlike", cls
    assert streamlike.Stream.__name__ == "Stream"


def test_the_native_module_holds_the_api_and_its_capsules_only(streamlike):
    # Nothing for benchmarks (bench/ builds its own floors) or tests hides in the native module:
    # each of its names is exported by the package, is one of the two C-API capsules, or is the
    # hook the package's own import watch calls when CuPy is imported (_cupy_watch.py).
    from streamlike import _streamlike

    internal = {"_C_API", "_current_stream_api", "_register_cupy_if_loaded"}
    extra = {n for n in dir(_streamlike) if not n.startswith("__")} - set(streamlike.__all__) - internal
    assert not extra, f"_streamlike names that are not the package's API: {sorted(extra)}"


# --- StreamView --------------------------------------------------------------------------------


def test_stream_view_reads_the_protocol_and_keeps_the_exporter(streamlike):
    exporter = Exporter(0x1234)
    alive = weakref.ref(exporter)
    view = streamlike.StreamView(exporter)
    assert view.handle == 0x1234
    assert view.source == "protocol"
    assert view.exporter is exporter
    assert view.__cuda_stream__() == (0, 0x1234)
    assert not view.is_default
    assert "Exporter" in repr(view) and "0x1234" in repr(view)
    del exporter
    gc.collect()
    assert alive() is not None  # the view keeps it
    del view
    gc.collect()
    assert alive() is None


def test_stream_view_of_a_default_stream(streamlike):
    view = streamlike.StreamView(Exporter(0))
    assert view.handle == 1  # (0, 0) is the legacy default stream: cudaStreamLegacy
    assert view.is_default


def test_stream_view_accepts_the_deprecated_attribute_form_with_a_warning(streamlike):
    class Attribute:
        __cuda_stream__ = (0, 0x99)

    with pytest.warns(DeprecationWarning):
        assert streamlike.StreamView(Attribute()).handle == 0x99


def test_views_and_streams_compare_and_hash_by_handle(streamlike):
    a, b = streamlike.StreamView(Exporter(0x10)), streamlike.StreamView(Exporter(0x10))
    c = streamlike.StreamView(Exporter(0x20))
    assert a == b and hash(a) == hash(b) and a != c
    assert streamlike.Stream(Exporter(0x10)) == a
    assert a != 0x10  # a handle as an int is not a stream


def test_stream_view_of_a_streamlike_object_reads_it_directly(streamlike):
    stream = streamlike.Stream(Exporter(0x30))
    view = streamlike.StreamView(stream)
    assert view.source == "streamlike" and view.exporter is stream and view.handle == 0x30
    assert streamlike.StreamView(view).handle == 0x30


def test_the_protocol_is_the_way_out(streamlike):
    # Another library reads a StreamView or Stream through __cuda_stream__.
    view = streamlike.StreamView(Exporter(0x40))
    assert isinstance(view, streamlike.CudaStreamLike)
    assert streamlike.StreamView(Exporter(view.__cuda_stream__()[1])).handle == 0x40


# --- Stream ------------------------------------------------------------------------------------


def test_stream_of_an_object_keeps_it_alive_and_owns_a_reference(streamlike):
    exporter = Exporter(0x50)
    alive = weakref.ref(exporter)
    stream = streamlike.Stream(exporter)
    assert stream.owning and stream.use_count == 1
    assert stream.handle == 0x50 and stream.source == "protocol" and stream.exporter is exporter
    assert "owning" in repr(stream) and "Exporter" in repr(stream)
    del exporter
    gc.collect()
    assert alive() is not None
    del stream
    gc.collect()
    assert alive() is None


def test_stream_of_a_stream_shares_its_owner(streamlike):
    first = streamlike.Stream(Exporter(0x60))
    second = streamlike.Stream(first)
    assert second.handle == first.handle and second.source == "streamlike"
    assert first.use_count == 2 and second.use_count == 2
    del second
    assert first.use_count == 1


def test_stream_create_without_a_gpu_names_the_cuda_error(streamlike):
    if gpu_present(streamlike):
        pytest.skip("a GPU is present: Stream.create succeeds")
    with pytest.raises(RuntimeError, match=r"cudaError\w+"):
        streamlike.Stream.create()
    with pytest.raises(RuntimeError, match=r"cudaError\w+"):
        streamlike.StreamPool(2)
    # Everything that needs no GPU still works after the failures.
    assert streamlike.StreamView(Exporter(0x70)).handle == 0x70


def test_queries_without_a_gpu_name_the_cuda_error(streamlike):
    if gpu_present(streamlike):
        pytest.skip("a GPU is present: the queries succeed")
    view = streamlike.StreamView(Exporter(0x1234))
    for fact in ("device", "id", "priority", "flags", "is_capturing"):
        with pytest.raises(RuntimeError, match=r"cudaError\w+"):
            getattr(view, fact)
    # The facts name the query that failed (the core's error, shared_stream's operation), on a
    # fresh view each, since the first query fills the cache all of them read.
    for fact in ("device", "id", "priority", "flags"):
        with pytest.raises(RuntimeError, match=rf"shared_stream::{fact}: cudaStreamGetDevice failed: cudaError\w+"):
            getattr(streamlike.StreamView(Exporter(0x1234)), fact)
        with pytest.raises(RuntimeError, match=rf"shared_stream::{fact}: cudaStreamGetDevice failed: cudaError\w+"):
            getattr(streamlike.Stream(Exporter(0x1234)), fact)
    with pytest.raises(RuntimeError, match=r"cudaError\w+"):
        view.sync()


# --- Owning references through __cuda_stream_owned__ -------------------------------------------


class OffersOwned:
    """An object that hands out owning references only (no __cuda_stream__)."""

    def __init__(self, stream):
        self.stream = stream

    def __cuda_stream_owned__(self):
        return self.stream.__cuda_stream_owned__()


class OffersBoth(OffersOwned):
    def __cuda_stream__(self):
        return self.stream.__cuda_stream__()


def test_a_stream_gives_out_owning_capsules(streamlike):
    stream = streamlike.Stream(Exporter(0x90))
    capsule = stream.__cuda_stream_owned__()
    assert type(capsule).__name__ == "PyCapsule" and "cuda_stream_owned" in repr(capsule)
    assert stream.use_count == 2  # the capsule holds one reference
    del capsule
    assert stream.use_count == 1  # an unconsumed capsule releases it


def test_stream_takes_an_owning_reference_where_offered(streamlike):
    original = streamlike.Stream(Exporter(0x91))
    for offer in (OffersOwned(original), OffersBoth(original)):
        taken = streamlike.Stream(offer)
        assert taken.source == "owned-capsule" and taken.handle == 0x91 and taken.exporter is offer
        assert original.use_count == 2
        del taken
        assert original.use_count == 1


def test_stream_view_reads_the_protocol_first_and_the_capsule_when_alone(streamlike):
    original = streamlike.Stream(Exporter(0x92))
    both = streamlike.StreamView(OffersBoth(original))
    assert both.source == "protocol" and original.use_count == 1
    alone = streamlike.StreamView(OffersOwned(original))
    assert alone.source == "owned-capsule" and alone.handle == 0x92
    assert original.use_count == 2  # the view holds the reference it was given
    del alone
    assert original.use_count == 1


def test_bad_owning_offers_name_what_was_wrong(streamlike):
    class ReturnsInt:
        def __cuda_stream_owned__(self):
            return 5

    with pytest.raises(TypeError, match="cuda_stream_owned"):
        streamlike.Stream(ReturnsInt())
    capsule = streamlike.Stream(Exporter(0x93)).__cuda_stream_owned__()

    class ReturnsSame:
        def __cuda_stream_owned__(self):
            return capsule

    streamlike.Stream(ReturnsSame())  # consumes it
    with pytest.raises(ValueError, match="consumed"):
        streamlike.Stream(ReturnsSame())

    class Declines:
        def __cuda_stream_owned__(self):
            return None

    with pytest.raises(TypeError, match="__cuda_stream__"):
        streamlike.Stream(Declines())  # no owning reference and no protocol
    assert streamlike.Stream(type("Fallback", (Declines,), {"__cuda_stream__": lambda self: (0, 0x94)})()).source == (
        "protocol"
    )


def test_a_cython_module_from_the_installed_pxd_exchanges_owning_streams(streamlike, cython_holder):
    stream = streamlike.Stream(Exporter(0xB0))
    holder = cython_holder.Holder(stream)  # Cython takes an owning reference from the package
    assert holder.handle == 0xB0 and stream.use_count == 2
    back = streamlike.Stream(holder)  # and hands it back: the package takes it over
    assert back.source == "owned-capsule" and back.handle == 0xB0 and holder.handle is None
    assert stream.use_count == 2
    del back
    assert stream.use_count == 1
    again = cython_holder.Holder(stream)
    again.release()
    assert stream.use_count == 1


# --- The integer decoders ----------------------------------------------------------------------


def test_integer_decoders_follow_their_conventions(streamlike):
    assert streamlike.from_dlpack_stream(None).handle == 1
    assert streamlike.from_dlpack_stream(1).handle == 1
    assert streamlike.from_dlpack_stream(2).handle == 2
    assert streamlike.from_dlpack_stream(-1) is None
    assert streamlike.from_dlpack_stream(0x1234).handle == 0x1234
    assert streamlike.from_dlpack_stream(0x1234).source == "dlpack"
    assert streamlike.from_cai_stream(None) is None
    assert streamlike.from_cai_stream(1).handle == 1
    assert streamlike.from_cai_stream(2).handle == 2
    assert streamlike.from_cai_stream(0x1234).handle == 0x1234
    assert streamlike.from_address(0).handle == 1  # the legacy default stream, named explicitly
    assert streamlike.from_address(2).handle == 2
    assert streamlike.from_address(2**64 - 1).handle == 2**64 - 1
    assert streamlike.from_address(0x1234).exporter is None


# --- Every bad input ---------------------------------------------------------------------------


class RaisesInside:
    def __cuda_stream__(self):
        raise KeyError("raised by the exporter itself")


def returns(value):
    class Returns:
        def __cuda_stream__(self):
            return value

    return Returns()


BAD_STREAMS = [
    # (argument, exception, words the message must hold)
    (5, TypeError, ["'int'", "__cuda_stream__", "not a stream"]),
    (None, TypeError, ["'NoneType'", "__cuda_stream__"]),
    ("x", TypeError, ["'str'", "__cuda_stream__"]),
    (1.5, TypeError, ["'float'"]),
    (returns(7), TypeError, ["Returns.__cuda_stream__", "sequence of 2", "'int'"]),
    (returns((0, 1, 2)), ValueError, ["Returns.__cuda_stream__", "3 element"]),
    (returns((1, 5)), ValueError, ["protocol version 1", "only version 0"]),
    (returns((0, -5)), ValueError, ["negative stream address -5"]),
    (returns((0, "a")), TypeError, ["stream address of type 'str'", "expected an int"]),
    (returns(("v", 5)), TypeError, ["version of type 'str'"]),
    (returns((0, 2**64)), ValueError, ["beyond 2**63 - 1"]),
]


@pytest.mark.parametrize(
    "make", ["StreamView", "Stream", "wait-consumer", "wait-producer", "method-wait", "wait_external-consumer"]
)
@pytest.mark.parametrize("arg,exc,words", BAD_STREAMS, ids=[repr(b[0])[:30] for b in BAD_STREAMS])
def test_bad_stream_arguments_name_what_was_given_and_what_was_expected(streamlike, make, arg, exc, words):
    good = streamlike.StreamView(Exporter(0x10))
    call = {
        "StreamView": lambda: streamlike.StreamView(arg),
        "Stream": lambda: streamlike.Stream(arg),
        "wait-consumer": lambda: streamlike.wait(arg, good),
        "wait-producer": lambda: streamlike.wait(good, arg),
        "method-wait": lambda: good.wait(arg),
        "wait_external-consumer": lambda: streamlike.wait_external(arg, object()),  # the consumer is read first
    }[make]
    with pytest.raises(exc) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_an_exception_inside_the_exporter_propagates_unchanged(streamlike):
    with pytest.raises(KeyError, match="raised by the exporter itself"):
        streamlike.StreamView(RaisesInside())
    with pytest.raises(KeyError, match="raised by the exporter itself"):
        streamlike.Stream(RaisesInside())


BAD_CALLS = [
    ("StreamView()", lambda s: s.StreamView(), TypeError, ["exactly one positional argument", "got 0"]),
    ("StreamView(a, b)", lambda s: s.StreamView(Exporter(), Exporter()), TypeError, ["exactly one", "got 2"]),
    ("StreamView(obj=)", lambda s: s.StreamView(obj=Exporter()), TypeError, ["exactly one", "1 keyword"]),
    ("Stream()", lambda s: s.Stream(), TypeError, ["exactly one positional argument", "Stream.create()"]),
    ("create(device='0')", lambda s: s.Stream.create(device="0"), TypeError, ["device must be None", "'str'"]),
    ("create(device=True)", lambda s: s.Stream.create(device=True), TypeError, ["device", "'bool'"]),
    ("create(device=-1)", lambda s: s.Stream.create(device=-1), ValueError, ["device ordinal >= 0", "-1"]),
    (
        "create(priority=1.5)",
        lambda s: s.Stream.create(priority=1.5),
        TypeError,
        ["priority must be an int", "'float'"],
    ),
    ("create(priority=2**40)", lambda s: s.Stream.create(priority=2**40), ValueError, ["priority", "out of range"]),
    ("create(non_blocking=1)", lambda s: s.Stream.create(non_blocking=1), TypeError, ["non_blocking must be a bool"]),
    ("create(colour=1)", lambda s: s.Stream.create(colour=1), TypeError, ["colour"]),
    ("StreamPool(0)", lambda s: s.StreamPool(0), ValueError, ["size must be between 1 and 65536", "got 0"]),
    ("StreamPool('4')", lambda s: s.StreamPool("4"), TypeError, ["size must be an int", "'str'"]),
    ("StreamPool(2, device='x')", lambda s: s.StreamPool(2, device="x"), TypeError, ["device must be None", "'str'"]),
    ("wait(a)", lambda s: s.wait(Exporter()), TypeError, ["exactly 2 arguments", "got 1"]),
    ("record(timing=1)", lambda s: s.StreamView(Exporter()).record(timing=1), TypeError, ["timing", "bool"]),
    ("record(True)", lambda s: s.StreamView(Exporter()).record(True), TypeError, ["positional"]),
    ("from_address(-1)", lambda s: s.from_address(-1), ValueError, ["invalid stream address -1", ">= 0"]),
    ("from_address(2**64)", lambda s: s.from_address(2**64), ValueError, ["64-bit"]),
    ("from_address('1')", lambda s: s.from_address("1"), TypeError, ["expected an int", "'str'"]),
    ("from_address(True)", lambda s: s.from_address(True), TypeError, ["'bool'"]),
    ("from_dlpack_stream(0)", lambda s: s.from_dlpack_stream(0), ValueError, ["0 is disallowed"]),
    ("from_dlpack_stream(-2)", lambda s: s.from_dlpack_stream(-2), ValueError, ["invalid stream value -2"]),
    ("from_dlpack_stream(1.0)", lambda s: s.from_dlpack_stream(1.0), TypeError, ["'float'"]),
    ("from_dlpack_stream(2**64)", lambda s: s.from_dlpack_stream(2**64), ValueError, ["64-bit"]),
    ("from_cai_stream(0)", lambda s: s.from_cai_stream(0), ValueError, ["0 is disallowed"]),
    ("from_cai_stream(-3)", lambda s: s.from_cai_stream(-3), ValueError, ["invalid stream value -3"]),
    ("from_cai_stream(True)", lambda s: s.from_cai_stream(True), TypeError, ["'bool'"]),
    ("Event()", lambda s: s.Event(), TypeError, []),
    (
        "wait_external(a)",
        lambda s: s.wait_external(Exporter()),
        TypeError,
        ["wait_external() takes exactly 2 arguments", "event: an Event", "got 1"],
    ),
    (
        "wait_external(a, stream)",
        lambda s: s.wait_external(Exporter(), s.StreamView(Exporter())),
        TypeError,
        ["wait_external: expected a streamlike.Event", "'streamlike.StreamView'"],
    ),
    (
        "wait_external(a, None)",
        lambda s: s.wait_external(s.Stream(Exporter()), None),
        TypeError,
        ["wait_external: expected a streamlike.Event", "'NoneType'"],
    ),
    (
        "StreamView.wait_external(stream)",
        lambda s: s.StreamView(Exporter()).wait_external(Exporter()),
        TypeError,
        ["wait_external: expected a streamlike.Event", "'Exporter'"],
    ),
    (
        "Stream.wait_external(5)",
        lambda s: s.Stream(Exporter()).wait_external(5),
        TypeError,
        ["wait_external: expected a streamlike.Event", "'int'"],
    ),
    ("StreamView.wait_external()", lambda s: s.StreamView(Exporter()).wait_external(), TypeError, ["wait_external"]),
    (
        "wait(a, b, c)",
        lambda s: s.wait(Exporter(), Exporter(), Exporter()),
        TypeError,
        ["exactly 2 arguments", "a stream object or an Event", "got 3"],
    ),
]


@pytest.mark.parametrize("name,call,exc,words", BAD_CALLS, ids=[b[0] for b in BAD_CALLS])
def test_bad_calls_name_what_was_given_and_what_was_expected(streamlike, name, call, exc, words):
    with pytest.raises(exc) as info:
        call(streamlike)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize(
    "call",
    [
        lambda s, event: s.StreamView(Exporter()).wait(event),
        lambda s, event: s.Stream(Exporter()).wait(event),
        lambda s, event: s.wait(Exporter(), event),
        lambda s, event: s.StreamView(Exporter()).wait_external(event),
        lambda s, event: s.Stream(Exporter()).wait_external(event),
        lambda s, event: s.wait_external(Exporter(), event),
    ],
    ids=["StreamView.wait", "Stream.wait", "wait", "StreamView.wait_external", "Stream.wait_external", "wait_external"],
)
def test_an_event_that_was_never_initialized_is_refused_by_every_wait(streamlike, call):
    # Event.__new__ makes an instance no create() filled in: refused before the library sees it.
    event = streamlike.Event.__new__(streamlike.Event)
    with pytest.raises(TypeError, match=r"wait(_external)?: the Event was never initialized.*Event\.create\(\)"):
        call(streamlike, event)


def test_every_wait_names_the_explicit_external_wait(streamlike):
    # The library's refusal of a capturing stream waiting on an outside event points to
    # wait_external(stream, event): the package has it under that name, as a function and a method.
    assert "wait_external" in streamlike.__all__
    assert streamlike.wait_external.__doc__.startswith("wait_external(consumer, event)")
    for cls in (streamlike.Stream, streamlike.StreamView):
        assert cls.wait_external.__doc__.startswith("wait_external(event)"), cls
        assert "recorded in the same capture" in cls.wait.__doc__, cls
        assert "wait_external" in cls.wait.__doc__, cls


def test_streams_cannot_be_subclassed(streamlike):
    # The casters of every module recognise the exact type.
    for cls in (streamlike.Stream, streamlike.StreamView):
        with pytest.raises(TypeError):
            type("Sub", (cls,), {})


# --- One type across modules -------------------------------------------------------------------


def test_modules_return_the_package_stream_type(streamlike, bridge_modules):
    for module in bridge_modules:
        returned = module.legacy_default_stream()
        assert type(returned) is streamlike.Stream, (module.__name__, type(returned))
        assert returned.owning and returned.handle == 1


def test_a_package_stream_crosses_modules_as_one_object_type(streamlike, bridge_modules):
    nb, pb = bridge_modules
    stream = streamlike.Stream(Exporter(0x80))
    assert nb.use_count_of(stream) == 2  # shares the owner: no new keep-alive block
    through_nb = nb.pass_through(stream)
    through_pb = pb.pass_through(through_nb)
    assert type(through_pb) is streamlike.Stream
    assert through_pb.handle == 0x80 and through_pb.use_count == 3  # stream, through_nb, through_pb
    assert nb.handle_of(streamlike.StreamView(stream)) == 0x80


def test_an_owning_reference_crosses_into_a_module_without_the_python_object(streamlike, bridge_modules):
    nb, _ = bridge_modules
    nb.release_held()
    stream = streamlike.Stream(Exporter(0xA0))
    offer = OffersOwned(stream)
    nb.hold(offer)  # the module's shared_stream parameter takes the capsule
    alive = weakref.ref(offer)
    del offer
    gc.collect()
    assert alive() is None
    assert stream.use_count == 2
    nb.release_held()
    assert stream.use_count == 1


def test_a_module_keeps_its_own_type_when_told_to(installed, bridge_modules):
    where = os.environ["STREAMLIKE_BRIDGE_MODULES_DIR"]
    code = (
        "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        "import streamlike, streamlike_nb_test as nb\n"
        "print(type(nb.legacy_default_stream()) is streamlike.Stream)"
    )
    env = {**os.environ, "STREAMLIKE_PYTHON_LOCAL_TYPE": "1"}
    out = subprocess.run([sys.executable, "-c", code, installed.site, where], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


# --- The stubs ---------------------------------------------------------------------------------


def run_mypy(installed, program):
    if shutil.which("mypy") is None and subprocess.run([sys.executable, "-c", "import mypy"]).returncode != 0:
        # CI (which sets CI) installs it: there a missing mypy is a failure, not a skip.
        (pytest.fail if os.environ.get("CI", "") not in ("", "0", "false") else pytest.skip)(
            "mypy is not installed (scripts/setup installs it)"
        )
    env = dict(os.environ)
    # An environment's own site-packages is searched already, and mypy refuses it in MYPYPATH.
    if os.path.realpath(installed.site) not in map(os.path.realpath, site.getsitepackages()):
        env["MYPYPATH"] = installed.site
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            os.devnull,
            "--python-version",
            f"{sys.version_info.major}.{sys.version_info.minor}",
            program,
        ],
        capture_output=True,
        text=True,
        env=env,
    )


def test_a_typed_program_passes_mypy_strict_against_the_stubs(installed, streamlike):
    result = run_mypy(installed, os.path.join(HERE, "typed_sample.py"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_catches_misuse_through_the_stubs(installed, streamlike):
    result = run_mypy(installed, os.path.join(HERE, "typed_misuse.py"))
    assert result.returncode == 1, result.stdout + result.stderr
    # Each marked line is reported, and nothing else.
    with open(os.path.join(HERE, "typed_misuse.py")) as f:
        expected = {i + 1 for i, line in enumerate(f) if "# error" in line}
    reported = {int(line.split(":")[1]) for line in result.stdout.splitlines() if ": error:" in line}
    assert reported == expected, result.stdout
