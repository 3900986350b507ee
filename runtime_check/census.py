"""The runtime census: what a candidate's forward really executed, whatever its source
looks like. One forward call on a verify case's inputs (never a timed call) is run with
three recorders on, in the candidate's child:

- every PyTorch operator dispatched (a TorchDispatchMode: it sees the ops below autograd,
  on every backend, the CPU interpreter included), by name with a count; a `_to_copy`
  that changes dtype is recorded as a conversion;
- every Triton kernel launched (`run` of Triton's JIT and interpreter kernel classes,
  wrapped for the call), by kernel name;
- where the backend's profiler records device activity (CUDA; the NPU where torch's
  profiler has a device activity for it), every device kernel, with the dispatched
  operator it was launched under, or none: a library kernel started without PyTorch's
  dispatcher (cuBLAS through ctypes, cupy, an inline extension) has no operator.

The child writes only names and counts (`census.json`). The parent classifies them with
the glue list lint uses (torch_api: allocation, views, layout copies, metadata), so the
rules that judge a submission never run in the submission's process:
- an operator that is not glue is PyTorch doing the math: degradation type 3;
- a device kernel launched outside the dispatcher that is neither a Triton kernel the
  forward launched nor a memory copy or fill: type 3 too;
- no Triton kernel launched at all: type 2.
The census is also the plain answer to "what does my forward call" for an honest user.
A submission can hide from recorders that run in its own process (pop the mode, rewrite
the file); the census catches what an honest or careless submission does, the device
profiler what it does not route through PyTorch, and the values check everything else.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from contextlib import ExitStack, contextmanager

from tritonlint import torch_api

CENSUS_BYTES = 1 << 20
CONVERSION = "aten::_to_copy (dtype conversion)"

# Operator names as the dispatcher spells them, beyond the Python API names lint's glue list uses.
_ATEN_GLUE = frozenset((
    "_unsafe_view alias lift_fresh lift_fresh_copy fill_ zero_ _to_copy copy copy_ empty empty_strided "
    "new_empty new_empty_strided new_zeros new_ones new_full _reshape_alias slice expand split_with_sizes "
    "unbind _local_scalar_dense set_ resize_ detach_ view_copy squeeze_ unsqueeze_ t_ transpose_ as_strided_ "
    "record_stream sym_size sym_stride sym_numel sym_storage_offset is_same_size _has_compatible_shallow_copy_type "
    "arange"  # index construction for a launch (lint leaves it to TL003's index rules; it moves no data)
).split())
GLUE_OPS = frozenset(n[len("torch."):] for n in torch_api.GLUE_FUNCTIONS) | torch_api.GLUE_METHODS | _ATEN_GLUE
_COPY_KERNELS = ("Memcpy", "Memset", "memcpy", "memset")


# -- the child's side: recording ---------------------------------------------------------------

def _triton_classes() -> list[tuple[type, bool]]:
    """(class, counts): the kernel classes whose `run` is a launch, and the wrappers around
    them (autotuning, heuristics) whose own torch calls are Triton's, not the candidate's."""
    out = []
    for module, name, counts in (("triton.runtime.jit", "JITFunction", True),
                                 ("triton.runtime.interpreter", "InterpretedFunction", True),
                                 ("triton.runtime.autotuner", "Autotuner", False),
                                 ("triton.runtime.autotuner", "Heuristics", False)):
        try:
            cls = getattr(__import__(module, fromlist=[name]), name)
        except (ImportError, AttributeError):
            continue
        if "run" in cls.__dict__:
            out.append((cls, counts))
    return out


@contextmanager
def _triton_launches(counts: Counter, inside: list[int]):
    """Count launches by kernel name (an autotuner's launch counts: it is the kernel's);
    `inside[0]` > 0 while Triton's own code runs (the interpreter moves arguments with torch
    calls, autotuning times with them), when the dispatch recorder does not count."""
    patched = []
    for cls, counting in _triton_classes():
        original = cls.__dict__["run"]

        def run(self, *args, _original=original, _counting=counting, **kwargs):
            if _counting and not kwargs.get("warmup"):
                fn = getattr(self, "fn", None)
                counts[getattr(fn, "__name__", None) or getattr(self, "__name__", "?")] += 1
            inside[0] += 1
            try:
                return _original(self, *args, **kwargs)
            finally:
                inside[0] -= 1

        cls.run = run
        patched.append((cls, original))
    try:
        yield
    finally:
        for cls, original in patched:
            cls.run = original


def imports(profiled: bool) -> list[str]:
    """What a census imports the first time it runs (the fork server imports it for its children
    while it is idle, zygote.LATER): with the device's profiler (`profiled`), torch._inductor, which
    the profiler's start looks for and which imports torch._dynamo (1-2 s in all); without it,
    torch._dynamo only where torch wraps the dispatch recorder's hook whatever it asks (a torch
    without _should_skip_dynamo)."""
    if profiled:
        return ["torch._inductor"]
    mode = _dispatch_mode(Counter(), [0])
    return ["torch._dynamo"] if "__wrapped__" in vars(type(mode).__dict__["__torch_dispatch__"]) else []


def _dispatch_mode(counts: Counter, inside: list[int]):
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    def record(func, args, kwargs):
        if inside[0] == 0:
            name = func._schema.name
            if name == "aten::_to_copy" and args and isinstance(args[0], torch.Tensor) \
                    and kwargs.get("dtype", args[0].dtype) != args[0].dtype:
                name = CONVERSION
            counts[name] += 1
        return func(*args, **kwargs)

    kept_out: list = []  # record under torch._disable_dynamo, made once torch._dynamo is loaded

    class Recorder(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            # torch would wrap the hook below to keep torch.compile out of it, and that wrapper
            # imports torch._dynamo (1-2 s) at the first op: the hook does it itself, only where
            # torch._dynamo is loaded (a forward may load it during the call), since only then can
            # anything compile (a hook left to it compiles, per operator, with the forward's backend)
            return False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if "torch._dynamo" not in sys.modules:
                return record(func, args, kwargs or {})
            if not kept_out:
                kept_out.append(torch._disable_dynamo(record, recursive=True))
            return kept_out[0](func, args, kwargs or {})

    return Recorder()


def _profiler(device: str):
    """torch's profiler with the device's activity, or None where it has none."""
    from torch.profiler import ProfilerActivity, profile

    activity = {"cuda": getattr(ProfilerActivity, "CUDA", None)}.get(device, getattr(ProfilerActivity, "PrivateUse1", None))
    if device == "cpu" or activity is None:
        return None
    return profile(activities=[ProfilerActivity.CPU, activity])


def _device_kernels(prof) -> list[dict]:
    """[{name, count, via}]: each device kernel with the outermost dispatched operator it was
    launched under; via None: no operator (Triton's launcher, or a library called directly).
    A kernel the profiler saw on the device but could not tie to a launch counts as via None."""
    from torch.autograd import DeviceType

    seen: Counter = Counter()
    on_device: Counter = Counter()
    for evt in prof.events():
        if evt.device_type != DeviceType.CPU:
            on_device[evt.name] += 1
            continue
        for k in evt.kernels or []:
            via, up = None, evt
            while up is not None:
                if "::" in up.name:
                    via = up.name
                up = up.cpu_parent
            seen[(k.name, via)] += 1
    for name, n in on_device.items():
        tied = sum(c for (k, _), c in seen.items() if k == name)
        if n > tied:
            seen[(name, None)] += n - tied
    return [{"name": n, "via": v, "count": c} for (n, v), c in sorted(seen.items(), key=lambda kv: (kv[0][0], kv[0][1] or ""))]


def record(call, device: str) -> dict:
    """Run `call()` once with every recorder on; the census (names and counts) as plain data."""
    import torch

    ops, launches, inside = Counter(), Counter(), [0]
    prof = _profiler(device)
    with ExitStack() as stack:
        if prof is not None:
            stack.enter_context(prof)
        stack.enter_context(_triton_launches(launches, inside))
        stack.enter_context(_dispatch_mode(ops, inside))
        call()
        if device != "cpu":
            getattr(torch, device).synchronize()
    return {"ops": dict(ops), "triton": dict(launches),
            "kernels": _device_kernels(prof) if prof is not None else None}


def write(census: dict, path) -> None:
    with open(path, "w") as f:
        json.dump(census, f)


# -- the parent's side: reading and judging -------------------------------------------------------

def load(path) -> dict:
    """A child's census, validated (protocol.read_untrusted: bounded, no links, no FIFOs), or
    {"error": why}: a missing or malformed census is reported, and the gate fails the file."""
    from tritonlint.runtime_check.protocol import read_untrusted

    data = read_untrusted(path, CENSUS_BYTES)
    if isinstance(data, dict):
        return {"error": data["error_msg"]}
    try:
        c = json.loads(data, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    except (ValueError, RecursionError) as e:
        return {"error": f"{path.name}: not JSON ({type(e).__name__})"}
    counts = lambda d: isinstance(d, dict) and all(isinstance(k, str) and type(v) is int and v >= 0 for k, v in d.items())
    kernel = lambda k: (isinstance(k, dict) and isinstance(k.get("name"), str) and type(k.get("count")) is int
                        and (k.get("via") is None or isinstance(k["via"], str)))
    if isinstance(c, dict) and set(c) == {"error"} and isinstance(c["error"], str):
        return {"error": c["error"][:600]}
    if not (isinstance(c, dict) and counts(c.get("ops")) and counts(c.get("triton"))
            and (c.get("kernels") is None or (isinstance(c["kernels"], list) and all(map(kernel, c["kernels"]))))):
        return {"error": f"{path.name}: not a census"}
    return {"ops": c["ops"], "triton": c["triton"], "kernels": c["kernels"]}


def is_glue_op(name: str) -> bool:
    ns, _, op = name.partition("::")
    return ns in ("aten", "prim") and op.split(".")[0] in GLUE_OPS


def judge(census: dict) -> dict:
    """The census with its classification: `compute` ({op: count}), `foreign_kernels`
    ({kernel: count}), and `regression_type` 3, 2 or None with `why`."""
    if "error" in census:
        return {**census, "regression_type": None, "why": f"census unreadable: {census['error']}"}
    compute = {op: n for op, n in sorted(census["ops"].items()) if not is_glue_op(op)}
    triton = census["triton"]
    foreign: Counter = Counter()
    for k in census["kernels"] or []:
        if k["via"] is None and not k["name"].startswith(_COPY_KERNELS) \
                and not any(k["name"] == t or k["name"].startswith(t + "_") for t in triton):
            foreign[k["name"]] += k["count"]
    out = {**census, "compute": compute, "foreign_kernels": dict(foreign), "regression_type": None, "why": None}
    if compute or foreign:
        listed = [f"{op} x{n}" for op, n in compute.items()] + [f"device kernel {k} x{n}" for k, n in foreign.items()]
        out.update(regression_type=3, why="the forward ran PyTorch or library compute: " + ", ".join(listed[:12]))
    elif not triton:
        out.update(regression_type=2, why="the forward launched no Triton kernel")
    return out
