"""Output comparison: seed 002's precision rule and seed 001's tolerance.

Policies
- "mere_mare" (default, seed 002): shape, NaN mask, Inf position and sign, bool
  exact, then on finite elements MERE < t and MARE < 10 t with t from the dtype
  table; integer outputs: exact when every input was an integer tensor, |diff| <= 1
  when floats were quantised to integers (the newest seed-002 verifier's rule).
- "allclose" (seed 001's example): torch.allclose(ref, out, atol=1e-2, rtol=1e-2).
- "seed001_strict" (seed 001's scoring text): max|diff| <= 1e-2 and
  max(|diff| / (|ref| + 1e-8)) <= 1e-2.
- "exact" (`--non-compute`, for data-movement ops: copies, gathers, transposes,
  casts): every output bit-identical, NaN where the reference has NaN.
- "three_term" (the newest seed-002 verifier's float rule, our reading of it): with
  rel = |diff| / max(|ref|, t), (1) an elementwise cap rel <= 100 t, (2) at least
  90 % of the elements matched (rel <= t), (3) MERE < t. It keeps the bulk of the
  elements as tight as MERE/MARE while one cancellation artefact (erf near -4, a
  twice-rounded GEMM + bias) no longer fails a correct kernel.
A failure says which check failed, with the thresholds and the worst elements.

The output contract comes before any value: the candidate returns what the reference
returns in container kind (a bare tensor, or a sequence: tuple and list are one kind,
a bare tensor and a one-item sequence are not), count, and per output type, dtype,
shape and device. Values are compared without casting the candidate's to the
reference's dtype (a float64 answer to a float32 task is the wrong kernel, whatever its
values). Sparse and other non-strided layouts, tensor subclasses, meta tensors, nested
sequences, dicts and other objects are contract violations with their own check name
(CONTRACT_CHECKS), never an exception in the gate. Non-contiguous outputs pass on
their values; `layout_notes` says which they were.
"""

from __future__ import annotations

import dataclasses
import math

import torch

# relative: benchmarks/ import this without installing; POLICIES stays importable from here for them
from .options import DEFAULTS, POLICIES  # noqa: F401

CAP_FACTOR, MATCHED_FRACTION = 100, 0.9
ATOL = RTOL = 1e-2
_FALLBACK = 2.0**-13


def threshold(dtype: torch.dtype) -> float:
    table = {torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7, torch.float32: 2.0**-13}
    for name, t in (("float8_e4m3fn", 2.0**-3), ("float8_e5m2", 2.0**-2), ("float8_e4m3fnuz", 2.0**-3), ("float8_e5m2fnuz", 2.0**-2)):
        if hasattr(torch, name):
            table[getattr(torch, name)] = t
    return table.get(dtype, _FALLBACK)


@dataclasses.dataclass
class Verdict:
    passed: bool
    check: str  # which check decided: shape, dtype, nan, inf, bool, int, mere_mare, allclose, ...
    message: str
    stats: dict = dataclasses.field(default_factory=dict)
    worst: list = dataclasses.field(default_factory=list)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


# The checks that are the output contract (verify reports them as error_type "OutputContract");
# "reference" means the reference's own output is outside what the gate compares.
CONTRACT_CHECKS = frozenset({"container", "count", "nested", "type", "layout", "subclass", "device", "dtype", "shape",
                             "reference"})
TAG = "__type__"  # portable()'s stand-in for a value that must not cross the process boundary as itself
_PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter)
_SCALARS = (int, float, bool, str, type(None))


def _exotic(t: torch.Tensor) -> tuple[str, str] | None:
    """(check, why) when a tensor is not a plain dense tensor with data, else None. type() and
    not isinstance or a method call: a subclass's __torch_function__ must not run here."""
    if type(t) not in _PLAIN_TENSORS:
        return "subclass", f"a tensor subclass ({type(t).__name__}), not a torch.Tensor"
    if t.layout != torch.strided:
        return "layout", f"a {str(t.layout).removeprefix('torch.')} tensor, not a dense (strided) one"
    if t.device.type == "meta":
        return "device", "a meta tensor (shape only, no data)"
    return None


def portable(value):
    """A child's value as plain data the parent can load with weights_only=True: plain tensors
    moved to the CPU, sequences as lists, scalars as they are; anything else becomes a tag
    {TAG: type name} (exotic tensors with their check and why), so the parent fails it by name
    instead of refusing the whole result file."""
    if isinstance(value, torch.Tensor):
        bad = _exotic(value)
        if bad is not None:
            return {TAG: type(value).__name__, "check": bad[0], "why": bad[1]}
        return host_copy(value)
    if isinstance(value, (list, tuple)):
        return [portable(v) for v in value]
    if type(value) in _SCALARS:  # exact types: an int subclass could lie in __eq__, and would not load
        return value
    return {TAG: type(value).__name__}


def host_copy(t: torch.Tensor) -> torch.Tensor:
    """A CPU copy of `t`, with its strides where it is dense (as `to` and `clone` keep them). From an
    accelerator it goes through page-locked memory, which torch's host allocator keeps for the next
    copy of its size: on an H100 a 256 MB tensor took 0.2 s into new pageable memory, 5 ms into pinned."""
    t = t.detach()
    if t.device.type == "cpu":
        return t.clone()
    try:
        out = torch.empty_like(t, device="cpu", pin_memory=True)
    except RuntimeError:  # no page-locked allocator for this device
        return t.to("cpu")
    return out.copy_(t)


def output_meta(value):
    """What moving to the CPU loses, mirroring portable(value): each plain tensor's device,
    strides and contiguity; None for everything else."""
    if isinstance(value, torch.Tensor):
        if _exotic(value) is not None:
            return None
        return {"device": str(value.device), "strides": list(value.stride()), "contiguous": bool(value.is_contiguous())}
    if isinstance(value, (list, tuple)):
        return [output_meta(v) for v in value]
    return None


def _is_sequence(value) -> bool:
    return isinstance(value, (list, tuple))


def _name(value) -> str:
    if isinstance(value, dict) and isinstance(value.get(TAG), str):
        return value[TAG]
    return type(value).__name__


def _leaf_problem(value) -> tuple[str, str] | None:
    """(check, why) when one output cannot be compared as a tensor or a scalar, else None."""
    if isinstance(value, torch.Tensor):
        return _exotic(value)  # a result file loaded in the parent may still hold a sparse or meta tensor
    if _is_sequence(value):
        return "nested", f"a {type(value).__name__} inside the outputs (nested outputs are not compared)"
    if isinstance(value, dict) and isinstance(value.get("check"), str) and value["check"] in CONTRACT_CHECKS:
        return value["check"], str(value.get("why", value.get(TAG)))
    if type(value) not in _SCALARS:
        return "type", f"expected a tensor, got {_name(value)}"
    return None


def _meta_at(meta, i: int, sequence: bool):
    item = (meta[i] if isinstance(meta, list) and i < len(meta) else None) if sequence else meta
    return item if isinstance(item, dict) else None


def contract(ref, out, ref_meta=None, out_meta=None) -> Verdict | None:
    """The first way `out` breaks the form of `ref`, as a failing Verdict, or None.
    `*_meta` are output_meta() as the child saw them (device, strides); without them the
    device is judged from the loaded tensors alone."""
    refs, outs = (list(ref) if _is_sequence(ref) else [ref]), (list(out) if _is_sequence(out) else [out])
    for i, r in enumerate(refs):
        bad = _leaf_problem(r)
        if bad is not None:
            return Verdict(False, "reference", f"the reference's output {i} is {bad[1]}: the gate compares a tensor "
                                               "or a flat sequence of tensors")
    for i, o in enumerate(outs):
        bad = _leaf_problem(o)
        if bad is not None:
            where = f"output {i} is " if _is_sequence(out) else "the output is "
            return Verdict(False, bad[0], bad[1] if bad[0] == "type" else where + bad[1])
    if _is_sequence(ref) != _is_sequence(out):
        if _is_sequence(out):
            if len(outs) == 1:
                return Verdict(False, "container", "a one-item sequence where the reference returns a bare tensor")
            return Verdict(False, "count", f"{len(outs)} outputs, reference returns one bare tensor")
        if len(refs) == 1:
            return Verdict(False, "container", "a bare tensor where the reference returns a one-item sequence")
        return Verdict(False, "count", f"1 output (a bare tensor), reference has {len(refs)}")
    if len(refs) != len(outs):
        return Verdict(False, "count", f"{len(outs)} outputs, reference has {len(refs)}")
    seq = _is_sequence(ref)
    for i, (r, o) in enumerate(zip(refs, outs)):
        where = f"output {i}: " if seq else ""
        if isinstance(r, torch.Tensor):
            if not isinstance(o, torch.Tensor):
                return Verdict(False, "type", f"{where}expected a tensor, got {_name(o)}")
            if o.dtype != r.dtype:
                return Verdict(False, "dtype", f"{where}dtype {o.dtype} != reference {r.dtype} (no cast before comparing)")
            if tuple(o.shape) != tuple(r.shape):
                return Verdict(False, "shape", f"{where}shape {tuple(o.shape)} != reference {tuple(r.shape)}")
            rm, om = _meta_at(ref_meta, i, seq), _meta_at(out_meta, i, seq)
            if rm and om:  # both children's own view; the loaded tensors are all on the CPU by then
                r_dev, o_dev = str(rm.get("device")), str(om.get("device"))
            else:
                r_dev, o_dev = str(r.device), str(o.device)
            if r_dev != o_dev:
                return Verdict(False, "device", f"{where}on {o_dev}, reference is on {r_dev}")
        elif type(o) is not type(r):
            return Verdict(False, "type", f"{where}expected {type(r).__name__}, got {_name(o)}")
    return None


def layout_notes(out, out_meta=None) -> list[str]:
    """One line per non-contiguous tensor output: reported, not failed."""
    outs = list(out) if _is_sequence(out) else [out]
    notes = []
    for i, o in enumerate(outs):
        if not isinstance(o, torch.Tensor) or _exotic(o) is not None:
            continue
        m = _meta_at(out_meta, i, _is_sequence(out))
        contiguous = m.get("contiguous") if m and isinstance(m.get("contiguous"), bool) else o.is_contiguous()
        if not contiguous:
            strides = m.get("strides") if m else list(o.stride())
            notes.append(f"output {i} is not contiguous (shape {list(o.shape)}, strides {strides}); compared on its values")
    return notes


def _worst(ref: torch.Tensor, out: torch.Tensor, rel: torch.Tensor, k: int = 5) -> list[dict]:
    flat = rel.reshape(-1)
    k = min(k, flat.numel())
    if k == 0:
        return []
    top = torch.topk(torch.nan_to_num(flat, nan=math.inf), k).indices
    out_rows = []
    for i in top.tolist():
        index = [int(x) for x in torch.unravel_index(torch.tensor(i), ref.shape)] if ref.dim() else []
        r, o = ref.reshape(-1)[i].item(), out.reshape(-1)[i].item()
        out_rows.append({"index": [int(x) for x in index], "candidate": o, "reference": r,
                         "abs_err": abs(o - r), "rel_err": flat[i].item()})
    return out_rows


def compare_tensor(ref: torch.Tensor, out: torch.Tensor, policy: str = DEFAULTS.policy, integer_inputs: bool = False) -> Verdict:
    """One output's values. The contract comes first: no cast to the reference's dtype, no move
    to its device; seed 002's 'cast impl to golden's dtype' is exactly what a float64 answer
    to a float32 task would need to pass."""
    broken = contract(ref, out)
    if broken is not None:
        return broken
    ref, out = ref.detach(), out.detach()
    if policy == "exact":
        return _exact(ref, out)
    if ref.dtype == torch.bool:
        same = torch.equal(ref, out)
        return Verdict(same, "bool", "bool outputs equal" if same else f"{int((ref != out).sum())} bool elements differ")
    if not (ref.is_floating_point() or ref.is_complex()):
        diff = (ref.long() - out.long()).abs()
        limit = 0 if integer_inputs else 1
        worst_diff = int(diff.max()) if diff.numel() else 0
        ok = worst_diff <= limit
        stats = {"max_abs_diff": worst_diff, "mismatched": int((diff > 0).sum()), "numel": diff.numel(), "limit": limit}
        if policy not in ("mere_mare", "three_term"):  # seed 001's rules read integers as numbers too
            ok = worst_diff <= ATOL
        rule = "exact (integer inputs)" if integer_inputs else "|diff| <= 1 (float quantised to integer)"
        msg = f"integer output: {stats['mismatched']} of {stats['numel']} differ, max |diff| {worst_diff}; rule {rule if policy in ('mere_mare', 'three_term') else policy}"
        return Verdict(ok, "int", msg, stats, [] if ok else _worst(ref.double(), out.double(), diff.double()))
    wide = torch.promote_types(ref.dtype, torch.float32)  # seed 002 computes in float32; float64 keeps its bits
    r32, o32 = ref.to(wide), out.to(wide)
    nan_r, nan_o = torch.isnan(r32), torch.isnan(o32)
    if not torch.equal(nan_r, nan_o):
        return Verdict(False, "nan", f"NaN positions differ: reference {int(nan_r.sum())}, candidate {int(nan_o.sum())}")
    inf_r, inf_o = torch.isinf(r32), torch.isinf(o32)
    if not torch.equal(inf_r, inf_o) or not torch.equal(r32[inf_r], o32[inf_o]):
        return Verdict(False, "inf", "Inf positions or signs differ")
    finite = ~(nan_r | inf_r)
    r, o = (r32, o32) if bool(finite.all()) else (r32[finite], o32[finite])  # a masked copy only when needed
    diff = (r - o).abs()
    seed001_rel = diff / (r.abs() + 1e-8)  # seed 001's relative error, reported under every policy
    stats = {"numel": int(r.numel()), "max_abs_diff": float(diff.max()) if diff.numel() else 0.0,
             "max_rel_diff": float(seed001_rel.max()) if diff.numel() else 0.0}
    if policy == "mere_mare":
        t = threshold(ref.dtype)
        rel = diff / r.abs().clamp(min=t)
        mere = float(rel.mean()) if rel.numel() else 0.0
        mare = float(rel.max()) if rel.numel() else 0.0
        stats.update({"threshold": t, "mere": mere, "mare": mare, "mere_limit": t, "mare_limit": 10 * t})
        ok = mere < t and mare < 10 * t
        msg = f"MERE {mere:.3e} (< {t:.3e}) and MARE {mare:.3e} (< {10 * t:.3e}) for {ref.dtype}"
    elif policy == "three_term":
        t = threshold(ref.dtype)
        rel = diff / r.abs().clamp(min=t)
        mere = float(rel.mean()) if rel.numel() else 0.0
        cap = float(rel.max()) if rel.numel() else 0.0
        matched = float((rel <= t).float().mean()) if rel.numel() else 1.0
        stats.update({"threshold": t, "mere": mere, "mere_limit": t, "max_rel": cap, "cap": CAP_FACTOR * t,
                      "matched_fraction": matched, "matched_limit": MATCHED_FRACTION})
        ok = cap <= CAP_FACTOR * t and matched >= MATCHED_FRACTION and mere < t
        msg = (f"max rel {cap:.3e} (<= {CAP_FACTOR * t:.3e}), matched {matched:.4f} (>= {MATCHED_FRACTION}), "
               f"MERE {mere:.3e} (< {t:.3e}) for {ref.dtype}")
    else:
        rel = seed001_rel
        stats.update({"atol": ATOL, "rtol": RTOL})
        if policy == "allclose":
            ok = bool(torch.allclose(o, r, atol=ATOL, rtol=RTOL))
            msg = f"torch.allclose(atol={ATOL}, rtol={RTOL}); max |diff| {stats['max_abs_diff']:.3e}"
            rel = diff / (ATOL + RTOL * r.abs())  # how far past the allclose bound, for the worst list
        else:
            ok = stats["max_abs_diff"] <= ATOL and stats["max_rel_diff"] <= RTOL
            msg = f"max |diff| {stats['max_abs_diff']:.3e} (<= {ATOL}) and max rel {stats['max_rel_diff']:.3e} (<= {RTOL})"
    worst = [] if ok else _worst(r, o, rel)
    return Verdict(ok, policy, ("pass: " if ok else "fail: ") + msg, stats, worst)


def _exact(ref: torch.Tensor, out: torch.Tensor) -> Verdict:
    if out.dtype != ref.dtype:
        return Verdict(False, "exact", f"dtype {out.dtype} != reference {ref.dtype} (bit-exact mode)")
    same = torch.equal(ref, out) or (ref.is_floating_point() and bool(torch.equal(ref.isnan(), out.isnan()))
                                     and torch.equal(torch.nan_to_num(ref), torch.nan_to_num(out)))
    if same:
        return Verdict(True, "exact", "pass: bit-identical")
    differ = (ref != out) & ~(ref.isnan() & out.isnan()) if ref.is_floating_point() else ref != out
    diff = (ref.double() - out.double()).abs() if not ref.is_complex() else (ref - out).abs().double()
    return Verdict(False, "exact", f"fail: {int(differ.sum())} of {ref.numel()} elements are not bit-identical",
                   {"mismatched": int(differ.sum()), "numel": ref.numel()},
                   _worst(ref.double(), out.double(), torch.nan_to_num(diff, nan=math.inf) * differ))


def same_bits(before, after) -> bool:
    """Bit-identical: dtype, shape and every byte (torch.equal calls NaN unequal to itself)."""
    if before is after:  # the parent's own copy, standing for an input a child reported unchanged
        return True
    if not (isinstance(after, torch.Tensor) and type(after) is torch.Tensor and after.layout == torch.strided
            and after.device.type != "meta" and after.dtype == before.dtype and after.shape == before.shape):
        return False
    a, b = before.detach().to(after.device).contiguous().reshape(-1), after.detach().contiguous().reshape(-1)
    return torch.equal(a.view(torch.uint8), b.view(torch.uint8))


def on_device(device: str, value):
    """`value` (a child's result, already validated) with its tensors on `device`, where the
    comparison of large outputs takes milliseconds instead of seconds on the host."""
    if device == "cpu":
        return value
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(on_device(device, v) for v in value)
    if isinstance(value, dict):
        return {k: on_device(device, v) for k, v in value.items()}
    return value


def all_integer(inputs) -> bool:
    """Whether every tensor input is an integer tensor: then integer outputs must be exact."""
    return all(not t.is_floating_point() for t in inputs if isinstance(t, torch.Tensor))


def flatten_outputs(value) -> list:
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def compare_scalar(ref, out) -> Verdict:
    """A Python scalar output (the contract made the types equal): floats by the fallback
    threshold's relative error, everything else exactly."""
    if isinstance(ref, float):
        t = _FALLBACK
        rel = abs(out - ref) / max(abs(ref), t) if math.isfinite(ref) else (0.0 if out == ref or (ref != ref and out != out) else math.inf)
        ok = rel < 10 * t
        return Verdict(ok, "scalar", f"{'pass' if ok else 'fail'}: float {out!r} vs reference {ref!r}, rel err {rel:.3e} (< {10 * t:.3e})")
    ok = out == ref
    return Verdict(ok, "scalar", f"{'pass' if ok else 'fail'}: {out!r} {'==' if ok else '!='} reference {ref!r}")


def compare_outputs(ref, out, policy: str = DEFAULTS.policy, integer_inputs: bool = False,
                    ref_meta=None, out_meta=None) -> list[Verdict]:
    """One verdict per output; a broken output contract is one failing verdict (its check in CONTRACT_CHECKS)."""
    broken = contract(ref, out, ref_meta, out_meta)
    if broken is not None:
        return [broken]
    return [compare_tensor(r, o, policy, integer_inputs) if isinstance(r, torch.Tensor) else compare_scalar(r, o)
            for r, o in zip(flatten_outputs(ref), flatten_outputs(out))]
