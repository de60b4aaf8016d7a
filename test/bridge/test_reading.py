"""What the casters read from a stream argument: the handle C++ sees, what is not a stream,
malformed __cuda_stream__ results, the deprecated attribute form, and the DLPack and
__cuda_array_interface__ integers.

Through the nanobind and pybind11 test modules (fixture `bridge`, conftest.py), with the fake
stream objects of exporters.py: no GPU needed.
"""

import warnings

import pytest
from exporters import (
    BAD_RESULTS,
    LEGACY,
    PER_THREAD,
    AttributeExporter,
    Boom,
    Exporter,
    NotAStream,
    OptedOut,
    PropertyRaisingExporter,
    RaisingExporter,
)

# --- the handle C++ sees --------------------------------------------------------------------------


@pytest.mark.parametrize("address", [3, 0x7F00_1234_5678, 2**63 - 1])
def test_view_sees_the_exported_address(bridge, address):
    # stream_view parameter: exactly the address the object exported.
    assert bridge.handle_of(Exporter((0, address))) == address


def test_any_two_sequence_is_accepted(bridge):
    # cuda.core accepts any sequence of length 2, not only a tuple.
    assert bridge.handle_of(Exporter([0, 0x1000])) == 0x1000


def test_integer_subclasses_and_index_objects_are_accepted(bridge):
    # int subclasses and objects with __index__ (numpy integers) are integers.
    class MyInt(int):
        pass

    class Index:
        def __index__(self):
            return 0x2000

    assert bridge.handle_of(Exporter((MyInt(0), MyInt(0x3000)))) == 0x3000
    assert bridge.handle_of(Exporter((0, Index()))) == 0x2000


@pytest.mark.parametrize("exported, seen", [(0, LEGACY), (1, LEGACY), (2, PER_THREAD)])
def test_default_streams(bridge, exported, seen):
    # (0, 0) is CuPy's null stream / numba's default stream: the legacy default stream, whatever
    # the importing translation unit's mode (streamlike::from_cuda_stream_protocol).
    assert bridge.handle_of(Exporter((0, exported))) == seen
    assert bridge.handle_of_shared(Exporter((0, exported))) == seen


def test_protocol_method_is_called_once_per_conversion(bridge):
    e = Exporter((0, 0x4000))
    bridge.handle_of(e)
    assert e.calls == 1


# --- what is not a stream -------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 1, 0x1234])
def test_int_is_not_a_stream(bridge, value):
    with pytest.raises(TypeError) as e:
        bridge.handle_of(value)
    message = str(e.value)
    assert "expected a CUDA stream" in message
    assert "'int'" in message
    assert "__cuda_stream__" in message
    assert "A Python int is not a stream" in message


def test_missing_protocol_names_the_type_and_the_expectation(bridge):
    with pytest.raises(TypeError, match=r"got an object of type 'NotAStream', which has no __cuda_stream__") as e:
        bridge.handle_of(NotAStream())
    assert "__cuda_stream__() method returning (0, address)" in str(e.value)
    with pytest.raises(TypeError, match="NotAStream"):
        bridge.handle_of_shared(NotAStream())


def test_none_is_not_a_stream(bridge):
    with pytest.raises(TypeError):
        bridge.handle_of(None)
    with pytest.raises(TypeError):
        bridge.handle_of_shared(None)


def test_opted_out_object_is_not_a_stream(bridge):
    with pytest.raises(TypeError, match="'OptedOut', which has no __cuda_stream__"):
        bridge.handle_of(OptedOut())


def test_exact_overload_wins_over_the_stream_overload(bridge):
    # overloaded(stream_view) is registered before overloaded(int): an int must still reach the
    # int overload (the stream caster declines in the exact pass), a stream the stream one.
    assert bridge.overloaded(5) == 2
    assert bridge.overloaded(Exporter((0, 0x10))) == 1


# --- malformed protocol results -------------------------------------------------------------------


@pytest.mark.parametrize("result, error, text", BAD_RESULTS, ids=[repr(r[0])[:24] for r in BAD_RESULTS])
@pytest.mark.parametrize("function", ["handle_of", "handle_of_shared", "handle_of_optional"])
def test_malformed_result_is_refused(bridge, function, result, error, text):
    exporter = Exporter(result)
    with pytest.raises(error) as e:
        getattr(bridge, function)(exporter)
    assert text in str(e.value)
    assert "Exporter.__cuda_stream__" in str(e.value)  # names the offending type


def test_exception_inside_the_method_propagates_unchanged(bridge):
    for function in (bridge.handle_of, bridge.handle_of_shared, bridge.handle_of_optional):
        error = Boom("raised inside __cuda_stream__")
        with pytest.raises(Boom) as e:
            function(RaisingExporter(error))
        assert e.value is error  # the very object, not a copy or a wrapper


def test_attribute_error_inside_the_method_is_not_mistaken_for_a_missing_method(bridge):
    error = AttributeError("inner attribute")
    with pytest.raises(AttributeError) as e:
        bridge.handle_of(RaisingExporter(error))
    assert e.value is error


def test_exception_from_the_lookup_propagates(bridge):
    with pytest.raises(KeyError, match="lookup failed"):
        bridge.handle_of(PropertyRaisingExporter())


def test_errors_stop_overload_resolution_instead_of_being_swallowed(bridge):
    # An object that claims to be a stream but exports garbage must not silently fall through to
    # another overload, nor into the binding's generic "incompatible arguments" message.
    with pytest.raises(ValueError, match="protocol version 7"):
        bridge.overloaded(Exporter((7, 0x10)))


# --- the deprecated attribute form ----------------------------------------------------------------


def test_attribute_form_is_accepted_with_a_deprecation_warning(bridge):
    with pytest.warns(DeprecationWarning, match="Implementing __cuda_stream__ as an attribute is deprecated"):
        assert bridge.handle_of(AttributeExporter((0, 0x5000))) == 0x5000
    with pytest.warns(DeprecationWarning):
        assert bridge.handle_of_shared(AttributeExporter((0, 0))) == LEGACY


def test_attribute_form_warning_as_error_raises_it(bridge):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(DeprecationWarning):
            bridge.handle_of(AttributeExporter((0, 0x5000)))


def test_attribute_form_is_validated_too(bridge):
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="protocol version 3"):
        bridge.handle_of(AttributeExporter((3, 0x5000)))


def test_method_form_does_not_warn(bridge):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bridge.handle_of(Exporter((0, 0x6000))) == 0x6000


# --- integers in the DLPack and __cuda_array_interface__ conventions ------------------------------


@pytest.mark.parametrize("value, seen", [(None, LEGACY), (-1, None), (1, LEGACY), (2, PER_THREAD), (0x1234, 0x1234)])
def test_dlpack_stream(bridge, value, seen):
    assert bridge.dlpack_handle(value) == seen


@pytest.mark.parametrize("value, seen", [(None, None), (1, LEGACY), (2, PER_THREAD), (0x1234, 0x1234)])
def test_cai_stream(bridge, value, seen):
    assert bridge.cai_handle(value) == seen


@pytest.mark.parametrize(
    "function, value, error, text",
    [
        ("dlpack_handle", 0, ValueError, "DLPack __dlpack__(stream=): invalid stream value 0"),
        ("dlpack_handle", -2, ValueError, "invalid stream value -2"),
        ("dlpack_handle", 2**64, ValueError, "out of the 64-bit range"),
        (
            "dlpack_handle",
            True,
            TypeError,
            "expected a DLPack __dlpack__(stream=) stream integer (an int or None), got an object of type 'bool'",
        ),
        ("dlpack_handle", 1.0, TypeError, "'float'"),
        ("dlpack_handle", Exporter((0, 5)), TypeError, "'Exporter'"),
        ("cai_handle", 0, ValueError, '__cuda_array_interface__ v3 "stream": invalid stream value 0'),
        ("cai_handle", -1, ValueError, "invalid stream value -1"),
        ("cai_handle", "1", TypeError, "'str'"),
    ],
)
def test_stream_integers_refused(bridge, function, value, error, text):
    with pytest.raises(error) as e:
        getattr(bridge, function)(value)
    assert text in str(e.value)
