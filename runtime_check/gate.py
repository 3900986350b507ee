"""Lint result -> runtime result: what `tritonlint FILE --run` adds to each file's JSON."""

from __future__ import annotations

import ast
import tempfile
from pathlib import Path

from tritonlint.runtime_check.backends import Backend
from tritonlint.runtime_check.benchmark import perf_report, shape_row
from tritonlint.runtime_check.options import GateOptions
from tritonlint.runtime_check.reference import References, reference_digest
from tritonlint.runtime_check.runner import Timed
from tritonlint.runtime_check.score import score, weighted
from tritonlint.runtime_check.tasks import CASES
from tritonlint.runtime_check.verify import census_refusal, verify


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


class GateError(Exception):
    """The gate cannot run for a file: no reference, or a broken one. A usage error, not a verdict."""


REFERENCE_NAMES = ("Model", "get_inputs", "get_init_inputs")


def reference_for(path: str, opts: GateOptions) -> tuple[Path, str | None]:
    """The reference task of a submission, checked before anything runs (GateError: one line naming the file)."""
    ref, tier = find_reference(Path(path), opts.reference)
    if ref is None:
        raise GateError(f"{path}: no reference task found for --run (pass --reference TASK.py, or name the files "
                        "{op}_torch.py and {op}_{impl}.py)")
    if not ref.is_file():
        raise GateError(f"{ref}: reference task file not found")
    try:
        tree = ast.parse(ref.read_bytes(), str(ref))
    except SyntaxError as e:
        raise GateError(f"{ref}:{e.lineno or 1}: the reference task does not parse: {e.msg}") from None
    defined = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    missing = [n for n in REFERENCE_NAMES if n not in defined]
    if missing:
        raise GateError(f"{ref}:1: the reference task defines no {', '.join(missing)} (a task file needs {', '.join(REFERENCE_NAMES)})")
    return ref, tier


# What the verdict calls each way a submission fails at run time (error_type -> verdict).
_VERDICTS = {"Timeout": "timeout", "Crash": "crashed", "UntimedWork": "untimed_work", "TimingRefused": "untimed_work"}


def verdict(v: dict, perf: dict | None, timed: bool) -> tuple[str, str]:
    """(runtime verdict, one line why): passed, incorrect, crashed, timeout, degraded (the census
    refused it), untimed_work or not_timed."""
    if v["failures"] or v["total_cases"] == 0:
        first = v["failures"][0] if v["failures"] else {"error_type": "NoCases", "error_msg": "no case ran", "case_idx": None}
        kinds = [f.get("error_type") for f in v["failures"]]
        kind = next((_VERDICTS[k] for k in ("Timeout", "Crash") if k in kinds), "incorrect")
        return kind, f"{v['passed_cases']}/{v['total_cases']} cases passed ({v['policy']}); case {first.get('case_idx')}: {first.get('error_type')}: {_first_line(first.get('error_msg'))}"
    if (refused := census_refusal(v)) is not None:
        return "degraded", f"census: {refused}"
    if not timed:
        return "passed", f"{v['total_cases']}/{v['total_cases']} cases passed ({v['policy']}); correctness only, not timed"
    bad = [r for r in (perf or {}).get("per_shape_results", []) if r.get("error_type")]
    if bad:
        k = bad[0]["error_type"]
        return _VERDICTS.get(k, "incorrect" if k == "TimedOutputMismatch" else "not_timed"), f"timing: {k}: {_first_line(bad[0].get('error_msg'))}"
    s = perf.get("speedup_vs_torch") if perf else None
    if s is None:
        return "not_timed", "timing produced no speedup"
    fw, impl = perf["framework"]["avg_latency_ms"], perf["implementation"]["avg_latency_ms"]
    against = " vs torch.compile" if perf.get("baseline") == "compile" else ""
    return "passed", (f"{v['total_cases']}/{v['total_cases']} cases passed ({v['policy']}); speedup {s:.2f}x{against} "
                      f"(framework {fw:.3f} ms, implementation {impl:.3f} ms)")


def _first_line(msg) -> str:
    return str(msg or "").strip().splitlines()[0][:300] if msg else ""


def _tampered(ref: Path, before: str) -> str | None:
    """Why the result is refused when the reference task file changed while the children ran
    (a candidate that rewrites it poisons this run's benchmark and every later run), else None."""
    try:
        after = reference_digest(ref)
    except OSError as e:
        after = f"unreadable ({e.strerror})"
    if after == before:
        return None
    return (f"ReferenceTampered: the reference task file {ref} changed while the gate ran "
            f"(sha256 {before[:16]} before, {after[:16]} after): the result is refused")


def run_gate(path: str, lint_valid: bool, lint_skipped: bool, backend: Backend, opts: GateOptions,
             references: References | None = None) -> dict:
    """`references`: the reference runs of this gate run (reference.py), shared by its submissions:
    one reference run, and one reference timing, per task."""
    if lint_skipped:
        return {"skipped": "not a Triton submission", "verdict": "skipped"}
    if not lint_valid:
        return {"skipped": "lint: the file is invalid, so the gate does not run it", "verdict": "skipped"}
    impl = Path(path)
    ref, tier = reference_for(path, opts)
    digest = reference_digest(ref)
    with tempfile.TemporaryDirectory(prefix="tritonlint-cache-") as fresh:
        cache = fresh if opts.fresh_cache else None
        kept: dict = {}
        timed = Timed(opts.warmup, opts.repeats, opts.baseline, opts.operators) if backend.times else None
        try:
            v = verify(ref, impl, backend, seeds=opts.seeds, timeout=opts.timeout, policy=opts.policy, op_name=impl.stem,
                       probe_state=opts.probe_state, cache_dir=cache, keep=kept, references=references, timed=timed)
        except Exception as e:  # the parent imports only the reference: its error is the reference's
            raise GateError(f"{ref}: the reference task raised {type(e).__name__}: {_first_line(e)}") from None
    broken = next((f for f in v["failures"] if f.get("error_type") == "ReferenceError"), None)
    if broken is not None:
        raise GateError(f"{ref}: {_first_line(broken.get('error_msg'))}")
    correct = v["total_cases"] > 0 and v["passed_cases"] == v["total_cases"]
    out: dict = {"reference": str(ref), "reference_sha256": digest, "isolation": v.get("isolation"), "verify": v,
                 "benchmark": None, "score": None}
    if (tampered := _tampered(ref, digest)) is not None:
        return {**out, "verdict": "incorrect", "why": tampered}
    if correct and census_refusal(v) is not None:
        out["regression_type"] = (v.get("census") or {}).get("regression_type")
        out["benchmark_skipped"] = "the census refused it: nothing is timed"
        out["verdict"], out["why"] = verdict(v, None, backend.times)
        return out
    if not correct:
        out["benchmark_skipped"] = "verification failed: nothing is timed (seed 002's L1 gate)"
    elif not backend.times:
        out["benchmark_skipped"] = "cpu backend (Triton's interpreter): correctness only, no timing claims"
    else:  # timed in the candidate's own child, after its cases and census (runner.Timed)
        row = shape_row(1, kept["inputs"], kept["reference"].framework, kept["timed"], None, kept["check"])
        perf = perf_report([row], impl.stem, opts.warmup, opts.repeats, opts.baseline, backend)
        out["benchmark"] = perf
        raw = score(perf["speedup_vs_torch"], correct)
        out["score"] = {"speedup": perf["speedup_vs_torch"], "raw": raw, "tier": tier,
                        "weighted": weighted(raw, tier) if tier else None}
    out["verdict"], out["why"] = verdict(v, out["benchmark"], backend.times)
    return out
