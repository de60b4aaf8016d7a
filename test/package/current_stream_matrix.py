"""The current-stream conformance matrix: one table of cases and one assertion helper, run against
stand-ins on a CPU (test_current_stream_matrix.py: the fake CUDA with two devices, the fake torch
shim and fake tvm-ffi libraries, a fake CuPy module) and against torch, CuPy and tvm-ffi on a GPU
(gpu_current_stream_matrix.py). docs/current-stream.md ("What each framework sees") describes what
this table asserts; where the two differ, this table is right.

A case: a stream kind, who sets it (streamlike.use, a C++ scoped_current_stream through the
bridge suite's bridge module, or a framework's own block), optionally an inner setter with a
second stream (each order), whether the innermost block raises (the outer block object kept
alive), whether another thread looks inside, and the device. The expectation is not written per
case: it comes from the documented rules, modelled once in `Model`:

- a scope (use or C++) sets every framework to its stream; a framework block sets that framework;
- inside a scope, the first framework in priority order (torch, tvm-ffi, CuPy) whose answer
  changed after the scope was entered decides current_stream(), else the scope's stream;
- outside any scope, the first answer naming a stream other than a default stream, else the
  first framework's answer (the legacy default stream when all are default);
- the legacy default stream is one stream whatever its handle (0 or 0x1); 0x2 is distinct;
- leaving (also by an exception) puts every framework back as it was; nothing on another thread
  or the other device changes; a device the process lacks, or a stream of another device, is
  refused by name before anything changes.

Every case runs on a thread of its own, so that a failed case leaves nothing behind for the next.
"""

import itertools
import threading
from dataclasses import dataclass

LEGACY = "legacy"  # the legacy default stream, whatever handle a framework gives it (0 or 0x1)
PER_THREAD = 0x2
FRAMEWORKS = ("torch", "tvm-ffi", "cupy")  # priority order
DEFAULTS = (LEGACY, PER_THREAD)

KINDS = ("legacy", "per_thread", "created", "pool", "torch", "cupy", "external")
SETTERS = ("use", "cpp", "torch-block", "tvm-block", "cupy-block")
SCOPES = ("use", "cpp")
DEVICES = ("0", "1", "out-of-range", "stream-of-device-0-on-1")


def canonical(handle):
    return LEGACY if handle in (0, 1, None) else handle


@dataclass(frozen=True)
class Case:
    kind: str
    setter: str
    device: str = "0"
    inner: str | None = None  # a setter nested inside `setter`, with a second stream
    inner_kind: str = "created"
    raises: bool = False
    other_thread_looks: bool = False

    @property
    def id(self):
        parts = [self.kind, self.setter, "dev" + self.device]
        if self.inner:
            parts.append(f"inner-{self.inner}-{self.inner_kind}")
        if self.raises:
            parts.append("raises")
        if self.other_thread_looks:
            parts.append("thread-looks")
        return "/".join(parts)

    @property
    def refused(self):
        """The outer setter refuses: a scope given a device the process lacks or a stream of
        another device."""
        if self.setter not in SCOPES:
            return False
        if self.device == "out-of-range":
            return True
        return self.device == "stream-of-device-0-on-1" and self.kind not in ("legacy", "per_thread")


def _cases():
    cases = []
    # Every kind under every setter on devices 0 and 1, alone, raising, and watched from a thread.
    for kind, setter, device in itertools.product(KINDS, SETTERS, ("0", "1")):
        if setter == "cupy-block" and kind == "torch":
            continue  # CuPy blocks take CuPy stream objects; a torch stream enters as external
        cases.append(Case(kind, setter, device))
        cases.append(Case(kind, setter, device, raises=True))
        cases.append(Case(kind, setter, device, other_thread_looks=True))
    # Nesting: every pair of setters, each order (the product lists both), outer and inner
    # streams of several kinds, on device 0; also raising from the inner block.
    for outer, inner in itertools.product(SETTERS, SETTERS):
        for kind, inner_kind in (
            ("created", "pool"),
            ("legacy", "created"),
            ("created", "legacy"),
            ("pool", "per_thread"),
        ):
            cases.append(Case(kind, outer, "0", inner=inner, inner_kind=inner_kind))
        cases.append(Case("created", outer, "0", inner=inner, inner_kind="pool", raises=True))
        cases.append(Case("created", outer, "1", inner=inner, inner_kind="cupy", other_thread_looks=True))
    # Devices the scope must refuse, for every kind.
    for kind, setter, device in itertools.product(KINDS, SCOPES, ("out-of-range", "stream-of-device-0-on-1")):
        cases.append(Case(kind, setter, device))
    return cases


CASES = _cases()


class Model:
    """What every framework and current_stream() answer, per device, from the documented rules."""

    def __init__(self, devices):
        self.seen = {d: {f: LEGACY for f in FRAMEWORKS} for d in devices}
        self.scopes = {d: [] for d in devices}  # (stream, what the scope left each framework)

    def copy(self):
        other = Model(list(self.seen))
        other.seen = {d: dict(v) for d, v in self.seen.items()}
        other.scopes = {d: list(v) for d, v in self.scopes.items()}
        return other

    def set_by(self, setter, stream, device):
        if setter in SCOPES:
            for f in FRAMEWORKS:
                self.seen[device][f] = stream
            self.scopes[device].append((stream, dict(self.seen[device])))
        else:
            self.seen[device][setter.split("-")[0] if setter != "tvm-block" else "tvm-ffi"] = stream

    def current(self, device):
        seen = self.seen[device]
        if self.scopes[device]:
            stream, left = self.scopes[device][-1]
            for f in FRAMEWORKS:
                if seen[f] != left[f]:
                    return seen[f]
            return stream
        return self.current_outside_scopes(device)

    def current_outside_scopes(self, device):
        """The rule without scopes: what a copy of streamlike that does not hold the open scope
        (another module's, the checker's) answers from the frameworks alone."""
        seen = self.seen[device]
        for f in FRAMEWORKS:
            if seen[f] not in DEFAULTS:
                return seen[f]
        return seen[FRAMEWORKS[0]]


class Frameworks:
    """What a backend gives the matrix (fake on a CPU, real on a GPU): the package, stream
    makers, each framework's answer and block, the bridge module's C++ scope."""

    devices = (0, 1)  # the devices the table reads (one where the machine has one)
    device_count = 2  # the process's devices: the first out of range
    sl = None
    bridge = None

    def make(self, kind, device):
        """(the object handed to a setter, its raw handle, what keeps it alive)."""
        raise NotImplementedError

    def answer(self, framework, device):
        """The raw handle `framework` names as current on `device` for this thread."""
        raise NotImplementedError

    def block(self, framework, obj, handle, device):
        """A context manager: `framework`'s own block making obj current on device."""
        raise NotImplementedError

    def current_device(self):
        raise NotImplementedError

    def torch_object_is(self, obj, device):
        """Whether torch's current stream object is `obj` itself (None: cannot tell)."""
        return None

    def cupy_current_object(self, device):
        raise NotImplementedError

    def torch_op_runs(self, device):
        """Runs a torch op on the current stream where torch is real; nothing on a CPU."""


def observe(fw, device):
    out = {f: canonical(fw.answer(f, device)) for f in FRAMEWORKS}
    out["current_stream"] = canonical(fw.sl.current_stream(device).__cuda_stream__()[1])
    return out


def expected(model, device):
    out = dict(model.seen[device])
    out["current_stream"] = model.current(device)
    return out


def check_state(fw, model, where, case):
    for d in fw.devices:
        got = observe(fw, d)
        want = expected(model, d)
        assert got == want, f"{case.id}: {where}, device {d}: the frameworks answer {got}, expected {want}"


def _setter_block(fw, setter, obj, handle, device, kept):
    """The context manager of a Python-level setter; `kept` keeps a use block object (alive after
    an exception)."""
    if setter == "use":
        block = fw.sl.use(obj, device=device)
        kept.append(block)
        return block
    framework = {"torch-block": "torch", "tvm-block": "tvm-ffi", "cupy-block": "cupy"}[setter]
    return fw.block(framework, obj, handle, device)


class _Raised(Exception):
    pass


def run_case(fw, case):
    """Runs `case` on a thread of its own and re-raises what failed there."""
    if needs_two_devices(case) and len(fw.devices) < 2:
        import pytest

        pytest.skip(f"{case.id} needs two devices; this process has {len(fw.devices)}")
    failure = []

    def target():
        try:
            _run_case(fw, case)
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            failure.append(e)

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if failure:
        raise failure[0]


def _device_of(fw, case):
    return {"0": 0, "1": 1, "out-of-range": fw.device_count, "stream-of-device-0-on-1": 1}[case.device]


def needs_two_devices(case):
    return case.device in ("1", "stream-of-device-0-on-1")


def _stream_device(case):
    return 0 if case.device in ("out-of-range", "stream-of-device-0-on-1") else int(case.device)


def _enter(fw, setter, obj, handle, device, kept, body):
    """Runs body() inside `setter`'s block (a C++ scope runs it from inside its C++ call)."""
    if setter == "cpp":
        return fw.bridge.call_inside_scope(obj, body, device)
    with _setter_block(fw, setter, obj, handle, device, kept):
        return body()


def _run_case(fw, case):
    device = _device_of(fw, case)
    model = Model(fw.devices)
    current_device = fw.current_device()
    cupy_before = fw.cupy_current_object(_stream_device(case))
    check_state(fw, model, "before", case)
    obj, handle, keep = fw.make(case.kind, _stream_device(case))
    kept = []

    if case.refused:
        import pytest

        with pytest.raises(ValueError, match="device"):
            _enter(fw, case.setter, obj, handle, device, kept, lambda: None)
        check_state(fw, model, "after a refused scope", case)
        assert fw.current_device() == current_device
        return

    outer_model = model.copy()
    outer_model.set_by(case.setter, canonical(handle), device)

    def look_from_another_thread(inner_model):
        seen = {}
        t = threading.Thread(target=lambda: seen.update({d: observe(fw, d) for d in fw.devices}))
        t.start()
        t.join()
        fresh = Model(fw.devices)
        for d in fw.devices:
            assert seen[d] == expected(fresh, d), f"{case.id}: another thread sees {seen[d]} on device {d}"

    def innermost(inner_model):
        check_state(fw, inner_model, "inside", case)
        if case.kind == "torch" and case.setter == "use" and inner_model is outer_model:
            assert fw.torch_object_is(obj, device) in (True, None), f"{case.id}: torch does not see s itself"
        # A torch op launches on torch's stream: where another framework's own block made a
        # different stream current (torch does not see tvm-ffi's or CuPy's blocks), the op would be
        # the wrong-stream launch the matrix documents, not a probe of what torch was handed. So
        # too where only the copy of streamlike holding the scope sees it so (torch's own block
        # naming a default stream inside a scope that set tvm-ffi too): a module that does not
        # hold the scope, the checker among them, answers tvm-ffi's stream (docs/streamcheck.md).
        torch_stream = inner_model.seen[device]["torch"]
        if torch_stream == inner_model.current(device) == inner_model.current_outside_scopes(device):
            fw.torch_op_runs(device)
        if case.other_thread_looks:
            look_from_another_thread(inner_model)
        if case.raises:
            raise _Raised(case.id)

    def outer_body():
        if case.inner is None:
            return innermost(outer_model)
        check_state(fw, outer_model, "inside the outer block", case)
        inner_obj, inner_handle, inner_keep = fw.make(case.inner_kind, device)
        inner_model = outer_model.copy()
        inner_model.set_by(case.inner, canonical(inner_handle), device)
        try:
            _enter(fw, case.inner, inner_obj, inner_handle, device, kept, lambda: innermost(inner_model))
        finally:
            check_state(fw, outer_model, "after the inner block", case)
        del inner_keep

    try:
        _enter(fw, case.setter, obj, handle, device, kept, outer_body)
    except _Raised:
        assert case.raises, f"{case.id}: raised where it should not"
        # `kept` still holds every use block object: what is checked below was restored by leaving
        # the blocks, not by collecting them.
        assert len(kept) == [case.setter, case.inner].count("use")
    else:
        assert not case.raises, f"{case.id}: the exception did not leave the blocks"
    check_state(fw, model, "after", case)
    assert fw.current_device() == current_device, f"{case.id}: the current device changed"
    if cupy_before is not None:
        assert fw.cupy_current_object(_stream_device(case)) is cupy_before, (
            f"{case.id}: CuPy's very object not restored"
        )
    del keep


def run_exit_on_another_thread(fw, kind, device):
    """A use block entered on one thread and left on another: refused there by name; the entering
    thread keeps the stream current in every framework; the leaving thread sees nothing change."""
    import pytest

    obj, handle, keep = fw.make(kind, device)
    entered, left = threading.Event(), threading.Event()
    shared = {}

    def entering():
        try:
            shared["block"] = fw.sl.use(obj, device=device)
            shared["block"].__enter__()
            entered.set()
            left.wait()
            model = Model(fw.devices)
            model.set_by("use", canonical(handle), device)
            check_state(fw, model, "on the entering thread after the foreign exit", Case(kind, "use", str(device)))
        except BaseException as e:  # noqa: BLE001 - handed back
            shared["failure"] = e
            entered.set()

    def leaving():
        try:
            with pytest.raises(RuntimeError, match="left on another thread"):
                shared["block"].__exit__(None, None, None)
            check_state(fw, Model(fw.devices), "on the leaving thread", Case(kind, "use", str(device)))
        except BaseException as e:  # noqa: BLE001 - handed back
            shared["failure"] = e

    t = threading.Thread(target=entering)
    t.start()
    entered.wait()
    if "failure" not in shared:
        other = threading.Thread(target=leaving)
        other.start()
        other.join()
    left.set()
    t.join()
    if "failure" in shared:
        raise shared["failure"]
    return keep


# --- A framework joining from C: the provider table's version and size --------------------------
REGISTERED, BAD_PROVIDER = 0, 1  # streamlike/c/current_stream_provider.h

# (what the table declares, as a function of this build's (major, minor); the registry's answer)
REGISTRATIONS = [
    ("this major and minor", lambda major, minor: (major, minor), REGISTERED),
    ("a newer minor of this major (a longer table)", lambda major, minor: (major, minor + 1), REGISTERED),
    ("major 0", lambda major, minor: (0, minor), BAD_PROVIDER),
    ("a newer major", lambda major, minor: (major + 1, 0), BAD_PROVIDER),
]


def run_registration(fw, declares, status, address=0xC000):
    """Registers the bridge module's provider (priority 150, answering `address`) through the
    package's capsule declaring what `declares` gives: registered ones are asked by
    current_stream() (outside any scope, torch on its default stream: the first specific answer)
    and unregister; refused ones never appear among the providers."""
    major, minor = declares(*fw.bridge.provider_version())
    got = fw.bridge.join_package_as(True, address, major, minor)
    try:
        assert got == status, f"a provider declaring version {major}.{minor}: {got}, expected {status}"
        names = fw.sl.current_stream_providers()
        assert ("module-framework" in names) == (status == REGISTERED), names
        want = address if status == REGISTERED else LEGACY
        assert canonical(fw.sl.current_stream(0).__cuda_stream__()[1]) == want
    finally:
        if got == REGISTERED:
            assert fw.bridge.join_package(False, 0) == REGISTERED
    assert "module-framework" not in fw.sl.current_stream_providers()
