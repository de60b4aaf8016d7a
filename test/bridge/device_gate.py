"""A device-side gate for the GPU tests: a kernel that spins on a flag in pinned host memory until
the test opens it, so work queued behind it on a stream cannot run before the test says so,
however slow the host or fast the device. It replaces sleeps that had to outlast a check
(torch.cuda._sleep): with a sleep, a slow host could fail a correct build, and a missing wait could
pass when the sleep ended before the unordered reader ran; with a gate, neither.

    gate = Gate(cupy)            # compiles test/gpu/gate_kernel.cuh (CuPy, NVRTC), pins 16 bytes
    gate.close(stream_handle)    # queued on the stream: everything queued after it is held
    ...queue work, check that nothing ran...
    gate.open()                  # the kernel returns; the held work runs
    assert not gate.timed_out    # it opened because the test said so, not by its timeout

A closed gate opens by itself after `timeout_s` (timed_out then says so), so a broken test fails
instead of hanging. Kernels that the held work needs must be loaded before the gate closes (CUDA
loads them lazily, and a first launch may wait for the running gate): warm them up first.
Pinned host memory is addressable from the device under unified addressing (every 64-bit CUDA
process), so the kernel reads the host's flag directly.
"""

import os
import time

# The kernel's one source, shared with the gpu suite's gate (nvcc) and the package's tests.
GATE_SOURCE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu", "gate_kernel.cuh")


def gate_source():
    """The gate kernel's source (test/gpu/gate_kernel.cuh): extern "C" streamlike_test_gate."""
    with open(GATE_SOURCE_PATH) as f:
        return f.read()


_kernels = {}


class Gate:
    def __init__(self, cupy, timeout_s=10.0):
        import numpy  # here, not at the top: the test modules import this file also where they skip

        self._numpy = numpy
        self._cupy = cupy
        if "gate" not in _kernels:
            _kernels["gate"] = cupy.RawKernel(gate_source(), "streamlike_test_gate")
        self._kernel = _kernels["gate"]
        self._memory = cupy.cuda.alloc_pinned_memory(4 * 4)
        self._state = numpy.frombuffer(self._memory, dtype=numpy.int32, count=4)
        self._state[:] = 0
        self._timeout_ns = int(timeout_s * 1e9)
        self._closed = False

    def close(self, stream_handle):
        """Queues the gate on the stream (a raw handle: int, or anything with .ptr/.cuda_stream)."""
        handle = getattr(stream_handle, "cuda_stream", getattr(stream_handle, "ptr", stream_handle))
        stream = self._cupy.cuda.ExternalStream(int(handle))
        u64 = self._numpy.uint64
        self._kernel((1,), (1,), (u64(self._memory.ptr), u64(self._timeout_ns)), stream=stream)
        self._closed = True
        return self

    def open(self):
        self._state[0] = 1

    def wait_started(self, seconds=10.0):
        """Waits until the gate's kernel runs (the stream reached it); returns whether it did."""
        deadline = time.monotonic() + seconds
        while self._state[2] == 0 and time.monotonic() < deadline:
            time.sleep(0.001)
        return bool(self._state[2])

    @property
    def timed_out(self):
        return bool(self._state[1])

    @property
    def ended(self):
        return bool(self._state[3])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.open()
        return False


def let_unordered_work_run(done, seconds=0.1):
    """Gives work that a missing wait would have left unordered its chance to run while a gate
    holds the producer: polls `done()` for at most `seconds` (unheld, a kernel on an idle stream
    runs within microseconds; work correctly held never runs, and costs the full time). Returns
    whether it ran."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.001)
    return bool(done())
