"""One record per submission: what lint found and what every repeat of the gate said,
reduced to the figures every output file shares (status, correctness, diffs, times,
speedup, seed-001 score). The writers only format records."""

from __future__ import annotations

import dataclasses
import statistics

from tritonlint.registry import rule_by_code
from tritonlint.runtime_check.score import score, weighted

from .discover import Submission
from .stats import summary

INCORRECT = {"MismatchError", "OutputContract", "OutputError", "InputModified", "HiddenStateMismatch"}  # OutputError: runs/ from before the contract
STATUSES = ("passed", "incorrect", "degraded", "timeout", "failed", "lint_rejected", "not_a_submission", "unreadable", "not_run")


@dataclasses.dataclass
class Lint:
    status: str  # the engine's: ok, skipped, error
    valid: bool
    regression_type: int | None
    codes: list[str]  # error and warning codes, one per finding
    types: list[str]  # degradation types found: "1".."4", "other"
    errors: int
    warnings: int
    reason: str | None = None

    @classmethod
    def of(cls, result) -> "Lint":
        codes = [d.code for d in result.diagnostics]
        types = set()
        for d in result.diagnostics:
            if not d.invalidates:  # hazards and performance findings never reject a submission
                continue
            rule = rule_by_code(d.code)
            rt = getattr(rule, "regression_type", None) if rule else None
            types.add(str(rt) if rt else "other")
        return cls(result.status, result.valid, result.regression_type, codes, sorted(types),
                   sum(d.severity == "error" for d in result.diagnostics),
                   sum(d.severity == "warning" for d in result.diagnostics), result.reason)


@dataclasses.dataclass
class Record:
    sub: Submission
    lint: Lint
    runs: list[dict]  # the gate's runtime dict per repeat (empty when not gated)

    @property
    def status(self) -> str:
        if self.lint.status == "error":
            return "unreadable"
        if self.lint.status == "skipped":
            return "not_a_submission"
        if not self.lint.valid:
            return "lint_rejected"
        if not self.runs:
            return "not_run"
        worst = "passed"
        for run in self.runs:
            s = run_status(run)
            if STATUSES.index(s) > STATUSES.index(worst):
                worst = s
        return worst

    @property
    def correct(self) -> bool:
        return self.status == "passed"

    @property
    def error(self) -> str | None:
        for run in self.runs:
            if "error" in run:
                return f"{run['error']['error_type']}: {run['error']['error_msg']}"
            for f in (run.get("verify") or {}).get("failures", []):
                return f"case {f['case_idx']}: {f['error_type']}: {(f.get('error_msg') or '').splitlines()[0] if f.get('error_msg') else ''}"
        for run in self.runs:  # every case passed, and the gate still did not: its census or its timing, in its own words
            if run.get("verdict") not in (None, "passed", "skipped") and run.get("why"):
                return f"{run['verdict']}: {run['why']}"
        if self.status in ("lint_rejected", "unreadable", "not_a_submission"):
            return self.lint.reason or ", ".join(sorted(set(c for c in self.lint.codes)))
        return None

    def _bench(self, key: str) -> list[float]:
        out = []
        for run in self.runs:
            b = run.get("benchmark") or {}
            v = (b.get(key) or {}).get("avg_latency_ms") if key != "speedup" else b.get("speedup_vs_torch")
            if v is not None:
                out.append(v)
        return out

    @property
    def speedups(self) -> list[float]:
        return self._bench("speedup") if self.correct else []

    @property
    def solution_ms(self) -> list[float]:
        return self._bench("implementation")

    @property
    def baseline_ms(self) -> list[float]:
        return self._bench("framework")

    @property
    def speedup(self) -> float | None:
        """The mean over repeats (each repeat's is seed 002's geometric mean over shapes)."""
        return statistics.fmean(self.speedups) if self.speedups else None

    @property
    def raw_score(self) -> float | None:
        """Seed 001: incorrect scores 0; a correct submission that was not timed (cpu) has no score."""
        if not self.correct:
            return 0.0
        return score(self.speedup, True) if self.speedup is not None else None

    @property
    def weighted_score(self) -> float | None:
        raw = self.raw_score
        return None if raw is None else weighted(raw, self.sub.case.tier)

    @property
    def baseline_failed(self) -> bool:
        """torch.compile could not compile the reference in some repeat (timing.py's BaselineCompileError)."""
        return any(row.get("error_type") == "BaselineCompileError" for run in self.runs
                   for row in (run.get("benchmark") or {}).get("per_shape_results", []))

    def diff(self, key: str) -> float | None:
        vals = [(run.get("verify") or {}).get(key) for run in self.runs]
        vals = [v for v in vals if v is not None]
        return max(vals) if vals else None

    def stats(self) -> dict:
        return {"speedup": summary(self.speedups), "solution_ms": summary(self.solution_ms),
                "baseline_ms": summary(self.baseline_ms)}

    def times(self, side: str) -> list[float]:
        """Every timed call of every repeat, for latency distributions."""
        out = []
        for run in self.runs:
            for row in (run.get("benchmark") or {}).get("per_shape_results", []):
                out += ((row.get(side) or {}).get("times_ms") or [])
        return out


_EVAL_STATUS = {"passed": "passed", "incorrect": "incorrect", "degraded": "degraded", "timeout": "timeout", "skipped": "not_run"}


def run_status(run: dict) -> str:
    """One gate run's outcome: passed, incorrect, timeout, failed, or not_run."""
    if "error" in run:
        return "failed"
    if "verdict" in run:  # the gate's own verdict, the one the CLI reports (timing failures included)
        return _EVAL_STATUS.get(run["verdict"], "failed")
    v = run.get("verify")  # runs/ written before the gate gave a verdict
    if v is None:
        return "not_run"
    types = {f["error_type"] for f in v.get("failures", [])}
    if not types and v.get("total_cases", 0) > 0:
        return "passed"
    if "Timeout" in types:
        return "timeout"
    if types <= INCORRECT and types:
        return "incorrect"
    return "failed"
