"""A stand-in for the parts of ``cupy.cuda`` that streamlike's CuPy provider touches, with CuPy 14's
rules (cupy/cuda/stream.pyx):

- a current stream object per thread and device; ``use()`` sets it, on the current device, which
  must be the stream's own (``device_id == -1``: any device);
- ``with stream:`` pushes the stream on a per-thread, per-device stack of blocks and makes it
  current; leaving the block pops it and makes the new top of the stack current, whatever
  ``use()`` set meanwhile (so a scope that made a stream current by ``use()`` alone would lose it
  when an inner CuPy block ends: the case that made the provider enter as ``with`` does).
"""

import threading
import types


def make(current_device):
    """The ``cupy`` module of a fake CuPy (``cupy.cuda`` its attribute ``cuda``) whose current
    device is ``current_device()``."""
    local = threading.local()

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
        pass

    Stream.null = Stream(0)
    Stream.ptds = Stream(2)

    def get_current_stream(device_id=-1):
        device = current_device() if device_id in (-1, None) else device_id
        return state().current.get(device, Stream.null)

    cuda = types.ModuleType("cupy.cuda")
    cuda.Stream = Stream
    cuda.ExternalStream = ExternalStream
    cuda.get_current_stream = get_current_stream
    cupy = types.ModuleType("cupy")
    cupy.cuda = cuda
    return cupy
