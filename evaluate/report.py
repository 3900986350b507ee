"""report.md and its charts (matplotlib, Agg, 300 dpi):
speedup per task, score per tier, degradation types found, latency distributions."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from pathlib import Path

from tritonlint.runtime_check.options import DEFAULTS, baseline_name
from tritonlint.runtime_check.tasks import TIER_WEIGHTS
from tritonlint.writer import write_atomic

from .outputs import baseline_of, best_per_task
from .records import Record

DPI = 300
TYPE_LABELS = {"1": "type 1: no kernel", "2": "type 2: never launched", "3": "type 3: torch does the math",
               "4": "type 4: placeholder kernel", "other": "other errors"}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def warm() -> None:
    """The chart library's import (0.4 s here, seconds on a cold disk), done ahead by a run that has
    the time to spare (eval, while its workers gate); a failure is left for the report to meet."""
    try:
        _plt()
    except Exception:
        pass


def _save(fig, path: Path) -> None:
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=DPI, bbox_inches="tight")
    tmp.replace(path)
    fig.clf()


def chart_speedup(records: list[Record], path: Path, against: str) -> bool:
    """Every correct, timed submission's speedup per task (dots), the best one (bar), 1× line.
    `against`: what the speedups are against (options.baseline_name)."""
    per_task: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r.speedup:
            per_task[r.sub.case.key].append(r.speedup)
    if not per_task:
        return False
    plt = _plt()
    tasks = sorted(per_task)
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(tasks) + 2), 4))
    ax.bar(range(len(tasks)), [max(per_task[t]) for t in tasks], color="#4c72b0", alpha=0.6, label="best submission")
    for i, t in enumerate(tasks):
        ax.scatter([i] * len(per_task[t]), per_task[t], color="black", s=10, zorder=3,
                   label="each correct submission" if i == 0 else None)
    ax.axhline(1.0, color="#c44e52", lw=1, ls="--", label=f"{against} reference (1×)")
    ax.set_yscale("log")
    ax.set_xticks(range(len(tasks)), tasks, rotation=45, ha="right")
    ax.set_ylabel(f"speedup over the {against} reference (log)")
    ax.set_title("Speedup per task")
    ax.legend(fontsize=7)
    _save(fig, path)
    plt.close(fig)
    return True


def chart_tier_scores(records: list[Record], path: Path, against: str) -> bool:
    """Best weighted seed-001 score per tier and set, against the tier's maximum."""
    best = best_per_task(records)
    sets = sorted({s for s, _ in best})
    tiers = sorted({r.sub.case.tier for r in records})
    if not any(r.speedup for r in records):  # nothing timed (cpu backend, lint only): no scores to draw
        return False
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(5, 1.5 * len(tiers) + 2), 4))
    width = 0.8 / max(1, len(sets))
    n_tasks = Counter(t.split("/")[0] for t in {r.sub.case.key for r in records})
    for j, s in enumerate(sets):
        vals = [sum(r.weighted_score or 0.0 for (ss, _), r in best.items() if ss == s and r.sub.case.tier == t) for t in tiers]
        ax.bar([i + j * width for i in range(len(tiers))], vals, width, label=s)
    ax.scatter([i + 0.4 - width / 2 for i in range(len(tiers))], [100 * TIER_WEIGHTS.get(t, 1.0) * n_tasks[t] for t in tiers],
               marker="_", s=400, color="black", label="maximum")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(tiers))], tiers)
    ax.set_ylabel("weighted score (best submission per task)")
    ax.set_title("Seed-001 score per tier")
    ax.legend(fontsize=7, loc="lower right")
    _save(fig, path)
    plt.close(fig)
    return True


def chart_degradations(records: list[Record], path: Path, against: str) -> bool:
    counts = Counter(t for r in records for t in r.lint.types)
    plt = _plt()
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(6, 3.5))
    keys = list(TYPE_LABELS)
    ax.barh([TYPE_LABELS[k] for k in keys], [counts.get(k, 0) for k in keys], color="#dd8452")
    for i, k in enumerate(keys):
        ax.text(counts.get(k, 0), i, f" {counts.get(k, 0)}", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("submissions with at least one finding of this type")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # a count: no 0.5 submissions
    ax.set_title(f"Degradation types found ({len(records)} submissions)")
    _save(fig, path)
    plt.close(fig)
    return True


def chart_latency(records: list[Record], path: Path, against: str) -> bool:
    """Per task, the timed calls of the best submission against the reference's."""
    best = {}
    for (_, task), r in best_per_task(records).items():
        if r.times("implementation") and (task not in best or (r.speedup or 0) > (best[task].speedup or 0)):
            best[task] = r
    if not best:
        return False
    plt = _plt()
    tasks = sorted(best)
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(tasks) + 2), 4.5))
    sides = (("framework", "#c44e52", f"{against} reference"), ("implementation", "#4c72b0", "best submission"))
    for i, t in enumerate(tasks):
        for k, (side, color, label) in enumerate(sides):
            ys = best[t].times(side)
            if not ys:
                continue
            x0 = 3 * i + k
            xs = [x0 + 0.7 * ((j * 0.618034) % 1.0 - 0.5) for j in range(len(ys))]  # deterministic jitter
            ax.scatter(xs, ys, s=4, color=color, alpha=0.35, lw=0, label=label if i == 0 else None)
            ax.hlines(statistics.median(ys), x0 - 0.45, x0 + 0.45, color="black", lw=1.2,
                      label="median" if i == 0 and k == 0 else None)
    ax.set_yscale("log")
    ax.set_xticks([3 * i + 0.5 for i in range(len(tasks))], tasks, rotation=45, ha="right")
    ax.set_ylabel("latency of each timed call, ms (log)")
    ax.set_title("Latency distributions: every timed call, all repeats")
    ax.legend(fontsize=7, markerscale=3)
    _save(fig, path)
    plt.close(fig)
    return True


CHARTS = {"speedup_per_task.png": chart_speedup, "score_per_tier.png": chart_tier_scores,
          "degradation_types.png": chart_degradations, "latency_distributions.png": chart_latency}


def _fmt(x, spec=".2f", unit="") -> str:
    return "–" if x is None else f"{x:{spec}}{unit}"


def report_md(records: list[Record], summ: dict, teams: list[dict], device: dict, charts: dict[str, bool],
              board_md: str | None) -> str:
    repeats = summ["options"].get("repeats", 1)
    against = baseline_name(baseline_of(summ["options"]))
    L = ["# tritonlint evaluation report", "",
         f"{summ['total']} submissions, {summ['timestamp']}, device: {device.get('name')} "
         f"(backend {device.get('backend') or 'none'}, torch {device.get('torch') or '–'}, triton {device.get('triton') or '–'}), "
         f"{repeats} repeat(s), tolerance {summ['options'].get('gate', {}).get('policy', DEFAULTS.policy)}, "
         f"speedups against {against}.", ""]
    if summ["environment"].get("backend") == "cpu":
        L += ["> cpu backend: Triton's interpreter checks correctness only. Nothing is timed and no score is given.", ""]
    L += ["## Status", "", "| status | submissions |", "|---|---:|"]
    L += [f"| {s} | {n} |" for s, n in summ["by_status"].items() if n]
    L += ["", "## Per task", "",
          "| task | tier | subs | passed | T1 | T2 | T3 | T4 | other | best speedup | 95% CI | score | weight | weighted |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    per_task: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        per_task[r.sub.case.key].append(r)
    best = best_per_task(records)
    tier_tot: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for task in sorted(per_task):
        recs = per_task[task]
        types = Counter(t for r in recs for t in r.lint.types)
        top = max((b for (_, t), b in best.items() if t == task), key=lambda r: (r.raw_score or 0, r.speedup or 0))
        ci = top.stats()["speedup"]["ci95"]
        tier = recs[0].sub.case.tier
        w = TIER_WEIGHTS.get(tier, 1.0)
        tier_tot[tier][0] += top.weighted_score or 0.0
        tier_tot[tier][1] += 100 * w
        L.append(f"| {task.split('/')[1]} | {tier} | {len(recs)} | {sum(r.correct for r in recs)} | "
                 + " | ".join(str(types.get(k, 0)) for k in ("1", "2", "3", "4", "other"))
                 + f" | {_fmt(top.speedup, '.2f', '×')} | {'–' if not ci else f'{ci[0]:.2f}–{ci[1]:.2f}'} | "
                 f"{_fmt(top.raw_score, '.1f')} | {w:g} | {_fmt(top.weighted_score, '.1f')} |")
    L += ["", "Best submission per task and set; T1–T4: submissions with a degradation of that type; "
          "95% CI over whole-run repeats (needs --repeats ≥ 2).", "", "## Totals", "",
          "| tier | weighted score | maximum |", "|---|---:|---:|"]
    timed = any(r.speedup for r in records)
    for tier, (got, most) in sorted(tier_tot.items()):
        L.append(f"| {tier} | {got:.1f} | {most:.0f} |" if timed else f"| {tier} | – | {most:.0f} |")
    total = f"{sum(v[0] for v in tier_tot.values()):.1f}" if timed else "–"
    L.append(f"| **all** | **{total}** | **{sum(v[1] for v in tier_tot.values()):.0f}** |")
    if summ.get("geomean_speedup"):
        L += ["", f"Geometric mean speedup over correct, timed submissions: {summ['geomean_speedup']:.2f}×."]
    L += ["", "| metric | value |", "|---|---:|"]
    L += [f"| {k} (correct and ≥ {k[5:]}× faster) | {_pct(v)} |" for k, v in summ.get("fast_p", {}).items()]
    L += [f"| {k} (over each task's generations) | {_pct(v)} |" for k, v in summ.get("pass_at_k", {}).items()]
    if board_md:
        L += ["", "## Leaderboard", "", board_md.rstrip()]
    L += ["", "## Worst offenders", ""]
    L += _offenders(records, against)
    L += ["", "## Charts", ""]
    for name, made in charts.items():
        title = name[:-4].replace("_", " ")
        L.append(f"![{title}](charts/{name})" if made else f"*{title}: nothing to plot in this run.*")
        L.append("")
    if summ["unmatched_files"]:
        L += ["## Files that fit no layout", ""] + [f"- `{f}`" for f in summ["unmatched_files"]] + [""]
    return "\n".join(L).rstrip() + "\n"


def _offenders(records: list[Record], against: str) -> list[str]:
    rows = []
    lint = sorted((r for r in records if r.lint.errors), key=lambda r: -r.lint.errors)[:5]
    for r in lint:
        rows.append(f"- `{r.sub.key}`: {r.lint.errors} lint error(s) ({', '.join(sorted(set(r.lint.codes)))}), "
                    f"degradation type {r.lint.regression_type or '–'}")
    for r in [r for r in records if r.status in ("incorrect", "timeout", "failed")][:5]:
        rows.append(f"- `{r.sub.key}`: {r.status}: {(r.error or '').splitlines()[0][:160]}")
    for r in sorted((r for r in records if r.speedup and r.speedup < 1), key=lambda r: r.speedup)[:5]:
        rows.append(f"- `{r.sub.key}`: correct but slower than {against} ({r.speedup:.2f}×)")
    return rows or ["None."]


def write_report(out: Path, records: list[Record], written: dict, board_md: str | None) -> dict[str, bool]:
    charts_dir = out / "charts"
    charts_dir.mkdir(parents=True, exist_ok=True)
    charts = {}
    against = baseline_name(baseline_of(written["summary"]["options"]))
    for name, fn in CHARTS.items():
        charts[name] = fn(records, charts_dir / name, against)
        if not charts[name] and (charts_dir / name).exists():
            (charts_dir / name).unlink()  # a chart from an earlier run must not pass for this one's
    text = report_md(records, written["summary"], written["teams"], written["device"], charts, board_md)
    write_atomic(str(out / "report.md"), text, "utf-8")
    return charts


def _pct(v) -> str:
    return "—" if v is None else f"{100 * v:.1f} %"

