"""`tritonlint eval --compare A B`: two evaluation folders (two submission sets, or two
runs of one), task by task.

Per task the best correct submission of each side is compared on its solution
latency with Welch's t-test: over the whole-run repeats when both sides have two or
more, else over the timed calls of the single run (which shows a difference within
one device session, not across sessions; the output says which). Across tasks, a
paired t-test on log speedup says whether B is faster than A overall. Two runs timed
against different baselines (`--baseline`) are compared with a warning.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from tritonlint.runtime_check.options import baseline_name
from tritonlint.writer import write_atomic

from .outputs import baseline_of
from .stats import paired, welch

ALPHA = 0.05


def _best(summary: dict) -> dict[str, dict]:
    best: dict[str, dict] = {}
    for s in summary["submissions"]:
        if s["status"] != "passed" or not s.get("speedup"):
            continue
        cur = best.get(s["task"])
        if cur is None or s["speedup"] > cur["speedup"]:
            best[s["task"]] = s
    return best


def compare(a_dir: Path, b_dir: Path) -> dict:
    a, b = (json.loads((Path(d) / "summary.json").read_text(encoding="utf-8")) for d in (a_dir, b_dir))
    best_a, best_b = _best(a), _best(b)
    rows = []
    for task in sorted(set(best_a) | set(best_b)):
        x, y = best_a.get(task), best_b.get(task)
        row = {"task": task, "a": x and x["submission"], "b": y and y["submission"],
               "a_speedup": x and x["speedup"], "b_speedup": y and y["speedup"], "verdict": "only in one run"}
        if x and y:
            sa, sb = x["samples"], y["samples"]
            if len(sa["solution_ms"]) >= 2 and len(sb["solution_ms"]) >= 2:
                test, basis = welch(sa["solution_ms"], sb["solution_ms"]), "whole-run repeats"
            else:
                test, basis = welch(sa["times_ms"], sb["times_ms"]), "timed calls of one run"
            row.update(test=test, basis=basis, ratio=y["speedup"] / x["speedup"])
            if test is None:
                row["verdict"] = "not enough samples"
            elif test["p"] < ALPHA:
                row["verdict"] = "faster" if test["t"] < 0 else "slower"  # t > 0: B's latency is higher
            else:
                row["verdict"] = "no significant change"
        rows.append(row)
    both = [r for r in rows if r.get("ratio")]
    overall = paired([math.log(r["a_speedup"]) for r in both], [math.log(r["b_speedup"]) for r in both])
    if overall:
        overall["geomean_ratio"] = math.exp(overall["mean_diff"])
    metrics = {key: {name: {"a": a.get(key, {}).get(name), "b": b.get(key, {}).get(name)} for name in b.get(key, a.get(key, {}))}
               for key in ("fast_p", "pass_at_k")}
    common = sorted({s["task"] for s in a["submissions"]} & {s["task"] for s in b["submissions"]})
    baselines = {"a": baseline_of(a.get("options", {})), "b": baseline_of(b.get("options", {}))}
    return {"a": str(a_dir), "b": str(b_dir), "alpha": ALPHA, "tasks": rows, "overall": overall,
            "common_tasks": common, "metrics": metrics, "baselines": baselines,
            "warning": baseline_warning(baselines),
            "faster": [r["task"] for r in rows if r["verdict"] == "faster"],
            "slower": [r["task"] for r in rows if r["verdict"] == "slower"]}


def baseline_warning(baselines: dict[str, str]) -> str | None:
    """Why the two runs' speedups do not compare, or None."""
    if baselines["a"] == baselines["b"]:
        return None
    return (f"A's speedups are against {baseline_name(baselines['a'])}, B's against {baseline_name(baselines['b'])}: "
            "the speedup columns and the overall test mix two baselines (the per-task latency tests do not)")


def compare_md(c: dict) -> str:
    lines = [f"# Comparison: B = `{c['b']}` against A = `{c['a']}`", ""]
    if c["warning"]:
        lines += [f"> **Warning:** {c['warning']}.", ""]
    lines += ["| task | A speedup | B speedup | B/A | p | basis | verdict |", "|---|---:|---:|---:|---:|---|---|"]
    for r in c["tasks"]:
        def f(v, spec=".2f"):
            return "–" if v is None else format(v, spec)
        p = r.get("test") and r["test"]["p"]
        lines.append(f"| {r['task']} | {f(r['a_speedup'])} | {f(r['b_speedup'])} | {f(r.get('ratio'))} | "
                     f"{f(p, '.3g')} | {r.get('basis', '–')} | {r['verdict']} |")
    o = c["overall"]
    lines += ["", f"Significantly faster in B: {', '.join(c['faster']) or 'none'}.",
              f"Significantly slower in B: {', '.join(c['slower']) or 'none'}.", ""]
    if o:
        lines.append(f"Across {o['df'] + 1} tasks (paired t-test on log speedup): B/A geometric mean "
                     f"{o['geomean_ratio']:.3f}, t = {o['t']:.2f}, p = {o['p']:.3g}.")
    else:
        lines.append("Fewer than two tasks correct and timed in both: no overall test.")
    if not c["common_tasks"]:
        lines.append("The two runs have no task in common: nothing is compared task by task.")
    pct = lambda v: "–" if v is None else f"{100 * v:.1f} %"  # noqa: E731
    lines += ["", "| metric | A | B |", "|---|---:|---:|"]
    lines += [f"| {name} | {pct(v['a'])} | {pct(v['b'])} |" for group in c["metrics"].values() for name, v in group.items()]
    return "\n".join(lines) + "\n"


def write_compare(a_dir: Path, b_dir: Path, out: Path) -> dict:
    c = compare(a_dir, b_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(str(out / "compare.json"), json.dumps(c, indent=2) + "\n", "utf-8")
    write_atomic(str(out / "compare.md"), compare_md(c), "utf-8")
    return c
