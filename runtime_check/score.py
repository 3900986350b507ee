"""Seed 001's score and seed 002's speedup bookkeeping."""

from __future__ import annotations

import math

from .tasks import TIER_WEIGHTS  # relative: benchmarks/ import this without installing


def score(speedup: float | None, correct: bool) -> float:
    """Incorrect -> 0; s <= 0 -> 0; s < 1 -> 60 s; s >= 1 -> 60 + 40 min(s - 1, 4) / 4 (100 from 5x on)."""
    if not correct or speedup is None or not math.isfinite(speedup) or speedup <= 0:
        return 0.0
    return 60.0 * speedup if speedup < 1 else 60.0 + 40.0 * min(speedup - 1.0, 4.0) / 4.0


def weighted(raw: float, tier: str) -> float:
    return raw * TIER_WEIGHTS.get(tier, 1.0)


def classify(s) -> str:
    """Seed 002's order: none, nan, inf, negative, zero, else valid."""
    if s is None:
        return "none"
    if math.isnan(s):
        return "nan"
    if math.isinf(s):
        return "inf"
    if s < 0:
        return "negative"
    if s == 0:
        return "zero"
    return "valid"


def overall_speedup(speedups: list) -> tuple[float | None, dict[str, list[int]]]:
    """Geometric mean over finite positive speedups, and the 1-based case indices of the others."""
    buckets: dict[str, list[int]] = {k: [] for k in ("nan", "inf", "zero", "negative", "none")}
    valid = []
    for i, s in enumerate(speedups, start=1):
        kind = classify(s)
        if kind == "valid":
            valid.append(s)
        else:
            buckets[kind].append(i)
    gm = math.exp(sum(math.log(s) for s in valid) / len(valid)) if valid else None
    return gm, buckets
