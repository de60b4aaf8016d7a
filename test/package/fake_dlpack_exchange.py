"""A framework that offers DLPack's C exchange API and nothing else, for the DLPack provider's tests.

``make(module_name)`` returns a module whose ``Tensor`` type carries ``__dlpack_c_exchange_api__``: a
PyCapsule named ``"dlpack_exchange_api"`` holding a DLPackExchangeAPI laid out as dlpack.h (DLPack
1.3) declares it (a header of version and ``prev_api``, four function pointers left NULL, then
``current_work_stream``). Its current stream is per thread and device (``set_stream(device,
handle)``); ``fail_on`` is a set of devices whose ``current_work_stream`` returns -1. ``version``
makes the table of another major, with ``older`` (a major-1 table) reachable through ``prev_api``.
"""

import ctypes
import threading
import types

KDL_CUDA = 2


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLPackExchangeAPIHeader(ctypes.Structure):
    pass


DLPackExchangeAPIHeader._fields_ = [
    ("version", DLPackVersion),
    ("prev_api", ctypes.POINTER(DLPackExchangeAPIHeader)),
]

CURRENT_WORK_STREAM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))


class DLPackExchangeAPI(ctypes.Structure):
    _fields_ = [
        ("header", DLPackExchangeAPIHeader),
        ("managed_tensor_allocator", ctypes.c_void_p),
        ("managed_tensor_from_py_object_no_sync", ctypes.c_void_p),
        ("managed_tensor_to_py_object_no_sync", ctypes.c_void_p),
        ("dltensor_from_py_object_no_sync", ctypes.c_void_p),
        ("current_work_stream", CURRENT_WORK_STREAM),
    ]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


# Every framework made, for the process: DLPack requires an exchange API to stay valid that long, and
# a registered provider keeps calling it.
_made = []


def make(module_name, version=(1, 3), with_stream_function=True):
    """The module of a fake framework named `module_name` (see above)."""
    module = types.ModuleType(module_name)
    local = threading.local()
    module.fail_on = set()
    module.asked = []  # (device_type, device) per call

    def streams():
        if not hasattr(local, "streams"):
            local.streams = {}
        return local.streams

    def current_work_stream(device_type, device, out):
        module.asked.append((device_type, device))
        if device in module.fail_on:
            return -1
        out[0] = streams().get(device, 0) if device_type == KDL_CUDA else 0
        return 0

    function = CURRENT_WORK_STREAM(current_work_stream) if with_stream_function else CURRENT_WORK_STREAM()
    tables = []

    def table(major, minor, prev):
        t = DLPackExchangeAPI()
        t.header.version.major, t.header.version.minor = major, minor
        if prev is not None:
            t.header.prev_api = ctypes.cast(ctypes.pointer(prev), ctypes.POINTER(DLPackExchangeAPIHeader))
        t.current_work_stream = function
        tables.append(t)
        return t

    older = table(1, 3, None) if version[0] != 1 else None
    api = table(version[0], version[1], older)
    capsule = _capsule_new(ctypes.addressof(api), b"dlpack_exchange_api", None)

    class Tensor:
        __dlpack_c_exchange_api__ = capsule

    Tensor.__module__ = module_name + ".tensor"
    module.Tensor = Tensor
    module.set_stream = lambda device, handle: streams().__setitem__(device, handle)
    module._keep = (function, tables, capsule)
    _made.append(module)
    return module
