"""Correct programs that streamcheck must not report, run by own_suites.py under
`python -m streamlike.check --fail`: a torch eager training step of a small model and a CuPy
pipeline, each on the current stream it sets, in the ways programs set one. Each checks that its
work was done, so a run that did nothing cannot pass.

usage: workloads.py torch-training-step|cupy-pipeline
exits 77 without torch (or CuPy), the streamlike package or a CUDA device"""

import sys

SKIP = 77
STEPS = 5


def need(module):
    try:
        return __import__(module)
    except ImportError as e:
        print(f"workloads.py: {module} not importable ({e}); skipped")
        sys.exit(SKIP)


def torch_training_step():
    """A small MLP's forward, backward and SGD step, a few iterations on torch's default stream,
    inside torch.cuda.stream(s) and inside streamlike.use(s): the loss must fall on each."""
    torch = need("torch")
    if not torch.cuda.is_available():
        print("workloads.py: torch sees no CUDA device; skipped")
        sys.exit(SKIP)
    streamlike = need("streamlike")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(32, 64, device="cuda")
    target = torch.randn(32, 10, device="cuda")

    def train():
        losses = []
        for _ in range(STEPS):
            loss = torch.nn.functional.mse_loss(model(x), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return [float(v) for v in losses]  # read back on the stream the steps ran on

    s = torch.cuda.Stream()
    for name, scope in (
        ("torch's default stream", None),
        ("torch.cuda.stream(s)", lambda: torch.cuda.stream(s)),
        ("streamlike.use(s)", lambda: streamlike.use(s)),
    ):
        if scope is None:
            losses = train()
        else:
            s.wait_stream(torch.cuda.current_stream())  # the parameters the previous steps wrote
            with scope():
                losses = train()
            torch.cuda.current_stream().wait_stream(s)
        assert losses[-1] < losses[0], f"{name}: the loss did not fall: {losses}"
        print(f"workloads.py: torch training step on {name}: loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    torch.cuda.synchronize()


def cupy_pipeline():
    """Elementwise ops, a reduction and a copy back to the host, on a CuPy stream inside CuPy's own
    `with s:` and inside streamlike.use(s) (with torch loaded where it is installed, so that the
    checker, which reads torch's current stream, has a current stream to hold the launches to)."""
    cupy = need("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            raise RuntimeError("no device")
    except Exception as e:
        print(f"workloads.py: CuPy sees no CUDA device ({e}); skipped")
        sys.exit(SKIP)
    streamlike = need("streamlike")
    try:
        import torch  # noqa: F401  (loaded: use(s) sets torch's current stream too)
    except ImportError:
        pass
    numpy = need("numpy")
    host_in = numpy.linspace(0.0, 1.0, 4096, dtype=numpy.float32).reshape(64, 64)
    expected = ((host_in * 2.0 + 1.0) ** 2).sum(axis=1) - host_in.max()

    def pipeline(s):
        a = cupy.asarray(host_in)  # a host-to-device copy on the current stream
        b = (a * 2.0 + 1.0) ** 2
        c = b.sum(axis=1) - a.max()
        return cupy.asnumpy(c, stream=s)  # and back

    s = cupy.cuda.Stream(non_blocking=True)
    for name, scope in (("CuPy's with s", lambda: s), ("streamlike.use(s)", lambda: streamlike.use(s))):
        with scope():
            assert cupy.cuda.get_current_stream().ptr == s.ptr, name
            result = pipeline(s)
        s.synchronize()
        assert numpy.allclose(result, expected, rtol=1e-4), f"{name}: {result[:4]} != {expected[:4]}"
        print(f"workloads.py: CuPy pipeline under {name}: right")


WORKLOADS = {"torch-training-step": torch_training_step, "cupy-pipeline": cupy_pipeline}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in WORKLOADS:
        sys.exit(f"usage: workloads.py {'|'.join(WORKLOADS)}")
    WORKLOADS[sys.argv[1]]()
