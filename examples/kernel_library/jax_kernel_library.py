"""The XLA FFI targets under jax.jit, in a process of their own (XLA_FLAGS is read once, when
JAX's backend starts): gpu_kernel_library.py runs it once with XLA's command buffers off and once
on.

    python3 jax_kernel_library.py EXPECT_CAPTURING     # 1: command buffers on, 0: off

Checks, each round with new inputs: the ordering probe (a gated copy on XLA's stream, then
scale_add and sum on what it copied: right only if they ran behind the gate on XLA's stream, and
the result is not ready while the gate is closed); whether XLA's stream was capturing when the
handlers ran (the command-buffer setting took effect); and that the current stream of torch, CuPy,
tvm-ffi and the streamlike package are what they were. Prints PASS; exit 77 when JAX has no GPU.
"""

import os
import sys
import time

if os.environ.get("STREAMLIKE_PACKAGE_SITE"):  # the installed streamlike package, on the GPU machine
    sys.path.insert(0, os.environ["STREAMLIKE_PACKAGE_SITE"])

import kernel_library  # noqa: E402

try:
    import torch  # noqa: F401  (loaded, so its current stream is watched too)
except ImportError:
    pass
try:
    import cupy  # noqa: F401
except ImportError:
    pass
try:
    import tvm_ffi  # noqa: F401
except ImportError:
    pass

import jax
import jax.numpy as jnp
import numpy as np

N = 1 << 14
A = 3.0
ROUNDS = 3


def current_streams():
    seen = {}
    if "torch" in sys.modules and sys.modules["torch"].cuda.is_available():
        s = sys.modules["torch"].cuda.current_stream(0)
        seen["torch"] = (s.cuda_stream, s.stream_id)
    if "cupy" in sys.modules:
        seen["cupy"] = id(sys.modules["cupy"].cuda.get_current_stream())
    if "tvm_ffi" in sys.modules:
        t = sys.modules["tvm_ffi"]
        seen["tvm-ffi"] = t.get_raw_stream(t.device("cuda", 0))
    if "streamlike" in sys.modules:
        seen["streamlike"] = sys.modules["streamlike"].current_stream(0).handle
    return seen


def main(expect_capturing):
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("jax: no GPU device")
        return 77
    nb = kernel_library.nanobind_module()
    fns = kernel_library.jax_functions()
    gate = nb.Gate()

    @jax.jit
    def probe(x, y):
        t = fns.gated_copy(gate.address, x, 20_000_000_000)
        return fns.scale_add(A, t, y), fns.sum(t), fns.capturing()

    # One run with the gate open first: it compiles `probe` and loads its kernels. CUDA loads a
    # kernel at its first launch (lazy loading), and a load may wait for the device, so a first
    # launch queued behind the closed gate would wait for the gate.
    gate.open()
    warm = probe(jnp.zeros(N, jnp.float32), jnp.zeros(N, jnp.float32))
    jax.block_until_ready(warm)
    before = current_streams()
    for round_ in range(ROUNDS):
        x_host = ((np.arange(N) % 7) + 1 + round_).astype(np.float32)
        y_host = (np.arange(N) % 5).astype(np.float32)
        x, y = jnp.asarray(x_host), jnp.asarray(y_host)
        x.block_until_ready()
        y.block_until_ready()
        gate.reset()
        result, total, capturing = probe(x, y)
        deadline = time.monotonic() + 20
        while not gate.started and time.monotonic() < deadline:
            time.sleep(0.001)
        assert gate.started, "the gated copy never started"
        assert not result.is_ready(), f"round {round_}: the result was ready before the gate opened"
        assert current_streams() == before, f"round {round_}: a framework's current stream changed"
        gate.open()
        result.block_until_ready()
        assert not gate.timed_out, f"round {round_}: the gate opened by its timeout"
        np.testing.assert_array_equal(np.asarray(result), A * x_host + y_host)
        np.testing.assert_array_equal(np.asarray(total), [x_host.sum(dtype=np.float64)])
        got = int(np.asarray(capturing)[0])
        # The first run may execute the thunks before XLA records its command buffer; later ones replay it.
        if round_ > 0 or expect_capturing == 0:
            flags = os.environ.get("XLA_FLAGS")
            assert got == expect_capturing, (
                f"round {round_}: XLA's stream capturing={got}, expected {expect_capturing} (XLA_FLAGS={flags})"
            )
        print(f"round {round_}: right values behind the gate on XLA's stream; capturing={got}")
    assert current_streams() == before
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
