"""A stand-in for the parts of ``cupy.cuda`` that streamlike's CuPy provider touches, with CuPy 14's
rules (cupy/cuda/stream.pyx):

- a current stream object per thread and device; ``use()`` sets it, on the current device, which
  must be the stream's own (``device_id == -1``: any device);
- ``with stream:`` pushes the stream on a per-thread, per-device stack of blocks and makes it
  current; leaving the block pops it and makes the new top of the stack current, whatever
  ``use()`` set meanwhile (so a scope that made a stream current by ``use()`` alone would lose it
  when an inner CuPy block ends: the case that made the provider enter as ``with`` does).
- how a stream object is made from a handle, by ``flavour``: ``"cupy14"``, CuPy 14's
  ``Stream.from_external(obj)`` (any ``__cuda_stream__`` object, kept alive by the stream made
  from it, on the current device) beside an ``ExternalStream(ptr, device_id)`` that warns
  (DeprecationWarning, at the caller's line); ``"deprecated_only"``, a warning ``ExternalStream``
  and no ``from_external``; ``"cupy13"``, a silent ``ExternalStream`` and no ``from_external``.

``cuda.refused`` is a set of handles for which both ways raise RuntimeError (a CuPy that refuses a
stream); ``cuda.streams_made()`` counts the stream objects made from handles so far.
"""

import threading
import types
import warnings

FLAVOURS = ("cupy14", "deprecated_only", "cupy13")


def make(current_device, flavour="cupy14"):
    """The ``cupy`` module of a fake CuPy (``cupy.cuda`` its attribute ``cuda``) whose current
    device is ``current_device()``, with the stream constructors of ``flavour`` (above)."""
    if flavour not in FLAVOURS:
        raise ValueError(f"fake_cupy.make: flavour {flavour!r}; expected one of {FLAVOURS}")
    local = threading.local()
    refused = set()
    made = [0]

    def check_refused(ptr):
        if ptr in refused:
            raise RuntimeError(f"fake CuPy refuses the stream {ptr:#x}")
        made[0] += 1

    def state():
        if not hasattr(local, "current"):
            local.current = {}  # device -> stream object
            local.stacks = {}  # device -> the `with` blocks' stream objects, the default first
            local.block_devices = []  # the device of each block entered, innermost last
        return local

    class Stream:
        null = None
        ptds = None

        def __init__(self, ptr, device_id=-1):
            self.ptr = ptr
            self.device_id = device_id

        def __cuda_stream__(self):
            return (0, self.ptr)

        def _device(self):
            here = current_device()
            if self.device_id not in (-1, here):
                raise RuntimeError(
                    f"The device that the stream is created on ({self.device_id}) does not match "
                    f"with the current device ({here})"
                )
            return here

        def use(self):
            state().current[self._device()] = self
            return self

        def __enter__(self):
            device = self._device()
            s = state()
            s.stacks.setdefault(device, [Stream.null]).append(self)
            s.block_devices.append(device)
            s.current[device] = self
            return self

        def __exit__(self, *exc):
            s = state()
            device = s.block_devices.pop()
            stack = s.stacks[device]
            stack.pop()
            s.current[device] = stack[-1]

    class ExternalStream(Stream):
        def __init__(self, ptr, device_id=-1):
            if flavour != "cupy13":
                warnings.warn(
                    "cupy.cuda.ExternalStream is deprecated; use cupy.cuda.Stream.from_external",
                    DeprecationWarning,
                    stacklevel=2,
                )
            check_refused(ptr)
            super().__init__(ptr, device_id)

    def from_external(obj):
        version, ptr = obj.__cuda_stream__()
        if version != 0:
            raise ValueError(f"unsupported __cuda_stream__ version {version}")
        check_refused(ptr)
        stream = Stream(ptr, current_device())
        stream.external = obj  # kept alive while CuPy holds the stream
        return stream

    if flavour == "cupy14":
        Stream.from_external = staticmethod(from_external)
    Stream.null = Stream(0)
    Stream.ptds = Stream(2)

    def get_current_stream(device_id=-1):
        device = current_device() if device_id in (-1, None) else device_id
        return state().current.get(device, Stream.null)

    cuda = types.ModuleType("cupy.cuda")
    cuda.Stream = Stream
    cuda.ExternalStream = ExternalStream
    cuda.get_current_stream = get_current_stream
    cuda.refused = refused
    cuda.streams_made = lambda: made[0]
    cupy = types.ModuleType("cupy")
    cupy.cuda = cuda
    return cupy
