"""The package's C API as a C consumer reads it, through ctypes: `streamlike_package_api`
(include/streamlike/c/package_api.h) from the extension's `_C_API` capsule, and the current stream's
table it points to (`streamlike_current_stream_api`, include/streamlike/c/current_stream_provider.h).
For the tests and benchmarks that call what no Python name offers (unregistering a provider)."""

import ctypes


class CurrentStreamApi(ctypes.Structure):
    _fields_ = [
        ("major_version", ctypes.c_uint32),
        ("minor_version", ctypes.c_uint32),
        ("get", ctypes.c_void_p),
        ("set", ctypes.c_void_p),
        ("restore", ctypes.c_void_p),
        ("register_provider", ctypes.c_void_p),
        ("unregister_provider", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p)),
    ]


class PackageApi(ctypes.Structure):
    _fields_ = [
        ("layout_version", ctypes.c_uint32),
        ("stream_object_size", ctypes.c_uint32),
        ("stream_type", ctypes.c_void_p),
        ("view_type", ctypes.c_void_p),
        ("view_handle_offset", ctypes.c_ssize_t),
        ("current_stream", ctypes.POINTER(CurrentStreamApi)),
    ]


CAPSULE_NAME = b"streamlike._streamlike._C_API"
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def package_api(streamlike):
    """The imported package's streamlike_package_api."""
    return PackageApi.from_address(_capsule_pointer(streamlike._streamlike._C_API, CAPSULE_NAME))


def current_stream_api(streamlike):
    """The imported package's streamlike_current_stream_api."""
    return package_api(streamlike).current_stream.contents
