"""The statistics the report needs, without scipy: mean, std, the t-based 95 %
confidence interval, Welch's test for one case and the paired t-test across cases.
Student's t distribution comes from the regularised incomplete beta function."""

from __future__ import annotations

import math
import statistics


def summary(xs: list[float]) -> dict:
    """n, mean, sample std, and the 95 % confidence interval of the mean (t-based)."""
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    n = len(xs)
    if n == 0:
        return {"n": 0, "mean": None, "std": None, "ci95": None}
    mean = statistics.fmean(xs)
    if n == 1:
        return {"n": 1, "mean": mean, "std": None, "ci95": None}
    std = statistics.stdev(xs)
    half = t_quantile(0.975, n - 1) * std / math.sqrt(n)
    return {"n": n, "mean": mean, "std": std, "ci95": [mean - half, mean + half]}


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-14:
            break
    return h


def betai(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    if not math.isfinite(t):
        return 0.0
    return betai(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t (p > 0.5), by bisection on the two-sided p-value."""
    target = 2.0 * (1.0 - p)
    lo, hi = 0.0, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_two_sided_p(mid, df) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def welch(a: list[float], b: list[float]) -> dict | None:
    """Welch's t-test of mean(b) - mean(a); None with fewer than two values a side."""
    if len(a) < 2 or len(b) < 2:
        return None
    ma, mb, va, vb = statistics.fmean(a), statistics.fmean(b), statistics.variance(a), statistics.variance(b)
    se2 = va / len(a) + vb / len(b)
    if se2 == 0:
        return {"t": 0.0 if ma == mb else math.copysign(math.inf, mb - ma), "df": len(a) + len(b) - 2,
                "p": 1.0 if ma == mb else 0.0}
    t = (mb - ma) / math.sqrt(se2)
    df = se2**2 / ((va / len(a)) ** 2 / (len(a) - 1) + (vb / len(b)) ** 2 / (len(b) - 1))
    return {"t": t, "df": df, "p": t_two_sided_p(t, df)}


def paired(a: list[float], b: list[float]) -> dict | None:
    """Paired t-test of b - a over matched pairs; None with fewer than two pairs."""
    d = [y - x for x, y in zip(a, b, strict=True)]
    if len(d) < 2:
        return None
    mean, sd = statistics.fmean(d), statistics.stdev(d)
    if sd == 0:
        return {"t": 0.0 if mean == 0 else math.copysign(math.inf, mean), "df": len(d) - 1,
                "p": 1.0 if mean == 0 else 0.0, "mean_diff": mean}
    t = mean / (sd / math.sqrt(len(d)))
    return {"t": t, "df": len(d) - 1, "p": t_two_sided_p(t, len(d) - 1), "mean_diff": mean}


FAST_P = (0.0, 1.0, 1.5, 2.0)
PASS_K = (1, 5, 10)


def fast_p(outcomes: list[tuple[bool, float | None]], ps=FAST_P) -> dict[str, float | None]:
    """KernelBench's fast_p: the share of submissions that are correct and at least p times faster
    than the baseline (fast_0 is the share correct). `outcomes`: (correct, speedup) per submission."""
    n = len(outcomes)
    out = {}
    for p in ps:
        hits = sum(1 for ok, s in outcomes if ok and (p == 0 or (s is not None and s >= p)))
        out[f"fast_{p:g}"] = hits / n if n else None
    return out


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of pass@k from n samples of which c are correct:
    1 - C(n-c, k) / C(n, k), computed as a product so that large n stays exact enough."""
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def pass_at_ks(per_task: dict[str, tuple[int, int]], ks=PASS_K) -> dict[str, float | None]:
    """pass@k averaged over tasks, for each k that every task has at least k generations for."""
    out: dict[str, float | None] = {}
    for k in ks:
        eligible = [(n, c) for n, c in per_task.values() if n >= k]
        out[f"pass@{k}"] = sum(pass_at_k(n, c, k) for n, c in eligible) / len(eligible) if eligible and len(eligible) == len(per_task) else None
    return out

