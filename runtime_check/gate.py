"""Lint result -> runtime result: what `tritonlint FILE --run` adds to each file's JSON."""

from __future__ import annotations

import tempfile
from pathlib import Path

from tritonlint.runtime_check.backends import Backend
from tritonlint.runtime_check.benchmark import benchmark
from tritonlint.runtime_check.options import GateOptions
from tritonlint.runtime_check.score import score, weighted
from tritonlint.runtime_check.tasks import CASES
from tritonlint.runtime_check.verify import verify


def find_reference(impl: Path, explicit: str | None) -> tuple[Path | None, str | None]:
    """(reference task file, tier): --reference, seed 002's `{op}_torch.py` beside
    `{op}_{impl}.py`, or the case of the same name in cases/."""
    if explicit:
        return Path(explicit), _tier_of(Path(explicit))
    stem = impl.stem
    for ref in sorted(impl.parent.glob("*_torch.py")):
        op = ref.name[: -len("_torch.py")]
        if stem.startswith(op + "_") and ref != impl:
            return ref, _tier_of(ref)
    for ref in sorted(CASES.glob("t*/*/*_torch.py")) if CASES.is_dir() else []:
        op = ref.name[: -len("_torch.py")]
        if stem == op or stem.startswith(op + "_"):
            return ref, ref.parent.parent.name
    return None, None


def _tier_of(ref: Path) -> str | None:
    tier = ref.parent.parent.name
    return tier if tier.startswith("t") and tier[1:].isdigit() else None


def run_gate(path: str, lint_valid: bool, lint_skipped: bool, backend: Backend, opts: GateOptions) -> dict:
    if lint_skipped:
        return {"skipped": "not a Triton submission"}
    if not lint_valid:
        return {"skipped": "lint errors: the gate runs only files that lint clean"}
    impl = Path(path)
    ref, tier = find_reference(impl, opts.reference)
    if ref is None or not ref.exists():
        return {"skipped": "no reference task found (pass --reference TASK.py, or name files {op}_torch.py / {op}_{impl}.py)"}
    with tempfile.TemporaryDirectory(prefix="tritonlint-cache-") as fresh:
        cache = fresh if opts.fresh_cache else None
        kept: dict = {}
        v = verify(ref, impl, backend, seeds=opts.seeds, timeout=opts.timeout, policy=opts.policy, op_name=impl.stem,
                   probe_state=opts.probe_state, cache_dir=cache, keep=kept)
        correct = v["total_cases"] > 0 and v["passed_cases"] == v["total_cases"]
        out: dict = {"reference": str(ref), "verify": v, "benchmark": None, "score": None}
        if not correct:
            out["benchmark_skipped"] = "verification failed: nothing is timed (seed 002's L1 gate)"
        elif not backend.times:
            out["benchmark_skipped"] = "cpu backend (Triton's interpreter): correctness only, no timing claims"
        else:
            perf = benchmark(ref, impl, backend, timeout=opts.timeout, op_name=impl.stem, operators=opts.operators,
                             cache_dir=cache, warmup=opts.warmup, repeats=opts.repeats, expected=kept.get("outputs"),
                             policy=opts.policy)
            out["benchmark"] = perf
            raw = score(perf["speedup_vs_torch"], correct)
            out["score"] = {"speedup": perf["speedup_vs_torch"], "raw": raw, "tier": tier,
                            "weighted": weighted(raw, tier) if tier else None}
    return out
