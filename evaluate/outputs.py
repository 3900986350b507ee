"""The files an evaluation writes, all from records:
- `kernels/<set>/<task>.json`: seed 004's result JSON, one per kernel and set;
- `results.csv`: one row per submission × shape × repeat;
- `summary.json`: totals by status, tier, degradation type, and per-submission stats;
- `teams/<team>.json` and `leaderboard.json|md` for Bench Lite's team layout, with
  the fields its official runner writes.
Every file is written atomically."""

from __future__ import annotations

from tritonlint.runtime_check.protocol import strict_json

import ast
import csv
import io
import json
import math
import statistics
import textwrap
import time
from collections import Counter, defaultdict
from pathlib import Path

from tritonlint import __version__
from tritonlint.runtime_check.options import BASELINES
from tritonlint.runtime_check.score import score
from tritonlint.runtime_check.tasks import TIER_WEIGHTS, Case
from tritonlint.writer import write_atomic

from .discover import TEAM, Found
from .stats import fast_p, pass_at_ks
from .records import STATUSES, Record

CSV_FIELDS = ["set", "task", "tier", "round", "submission", "layout", "status", "correct", "regression_type",
              "lint_errors", "lint_warnings", "lint_codes", "repeat", "shape", "input_desc", "baseline_ms",
              "solution_ms", "speedup", "score", "weighted_score", "max_abs_diff", "max_rel_diff", "error"]


def write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(str(path), strict_json(data, indent=2, default=str) + "\n", "utf-8")


def baseline_of(options: dict) -> str:
    """The baseline a run timed against, from its summary.json `options` (eager before the option existed)."""
    return (options.get("gate") or {}).get("baseline", BASELINES[0])


def device_of(records: list[Record], env: dict) -> dict:
    for rec in records:
        for run in rec.runs:
            e = ((run or {}).get("verify") or {}).get("environment")
            if e:
                return {"name": e.get("device") or e.get("backend"), "backend": e.get("backend"), "torch": e.get("torch"),
                        "triton": e.get("triton"), "driver": e.get("driver")}
    return {"name": env.get("backend") or "none (lint only)", "backend": env.get("backend")}


# ---------------------------------------------------------------- seed 004

def kernel_signature(case: Case, records: list[Record]) -> dict:
    """name, axes, inputs, outputs and code of the reference, from its source and the
    shapes the gate saw (no shapes when nothing was gated)."""
    src = case.reference.read_text(encoding="utf-8")
    params, code = [], ""
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "forward":
                    params = [a.arg for a in fn.args.args[1:]]
                    code = textwrap.dedent("\n".join(src.splitlines()[fn.lineno - 1:fn.end_lineno]))
    inputs_desc, outputs_desc = None, None
    for rec in records:
        for run in rec.runs:
            v = (run or {}).get("verify") or {}
            inputs_desc = inputs_desc or v.get("input_desc")
            outputs_desc = outputs_desc or v.get("reference_outputs")
    axes: dict[str, dict] = {}

    def tensor(name: str, desc: dict | None) -> dict:
        if not desc or desc.get("type") != "tensor":
            return {"shape": [], "dtype": (desc or {}).get("type", "unknown")}
        shape = []
        for j, size in enumerate(desc["shape"]):
            axis = next((a for a, spec in axes.items() if spec["value"] == size), None)
            if axis is None:
                axis = f"{name}_{j}"
                axes[axis] = {"type": "const", "value": size}
            shape.append(axis)
        return {"shape": shape, "dtype": desc["dtype"].replace("torch.", "")}

    inputs = {p: tensor(p, (inputs_desc or [None] * len(params))[i] if inputs_desc and i < len(inputs_desc) else None)
              for i, p in enumerate(params)}
    outputs = {f"out{i}": tensor(f"out{i}", d) for i, d in enumerate(outputs_desc or [])}
    return {"name": case.name, "axes": axes, "inputs": inputs, "outputs": outputs, "code": code}


def seed004(case: Case, records: list[Record], device: dict, baseline: str) -> dict:
    """Seed 004's `baseline.compiled` is whether the baseline's code compiled: false only when
    torch.compile failed on the reference (`--baseline compile`); `kind` says which baseline it is."""
    baselines = [ms for rec in records for ms in rec.baseline_ms]
    gens = []
    for rec in sorted(records, key=lambda r: (r.sub.round, r.sub.key)):
        ran = rec.status in ("passed", "incorrect")
        g = {"round": rec.sub.round, "generated_code": rec.sub.path.read_text(encoding="utf-8", errors="replace"),
             "compiled": ran}
        if ran:
            g["max_diff"] = rec.diff("max_abs_diff")
            if rec.correct and rec.solution_ms:
                g["time"] = statistics.fmean(rec.solution_ms)
                g["speedup"] = rec.speedup
        g.update({"submission": rec.sub.key, "status": rec.status, "regression_type": rec.lint.regression_type,
                  "lint_codes": rec.lint.codes, "error": rec.error})
        gens.append({k: v for k, v in g.items() if v is not None or k in ("regression_type", "error")})
    ok = [g for g in gens if g["status"] == "passed"]
    speeds = [g["speedup"] for g in ok if g.get("speedup") is not None]
    base = {"compiled": not any(rec.baseline_failed for rec in records), "kind": baseline}
    if baselines:
        base["time"] = statistics.median(baselines)
    return {"device": device, "kernel_signature": kernel_signature(case, records), "baseline": base,
            "generations": gens, "success_rate": len(ok) / len(gens) if gens else 0.0,
            "avg_of_n": statistics.fmean(speeds) if speeds else 0.0, "max_of_n": max(speeds) if speeds else 0.0}


# ---------------------------------------------------------------- csv

def csv_rows(records: list[Record]) -> list[dict]:
    rows = []
    for rec in records:
        base = {"set": rec.sub.set, "task": rec.sub.case.name, "tier": rec.sub.case.tier, "round": rec.sub.round,
                "submission": rec.sub.key, "layout": rec.sub.layout, "status": rec.status, "correct": rec.correct,
                "regression_type": rec.lint.regression_type, "lint_errors": rec.lint.errors,
                "lint_warnings": rec.lint.warnings, "lint_codes": " ".join(rec.lint.codes),
                "max_abs_diff": rec.diff("max_abs_diff"), "max_rel_diff": rec.diff("max_rel_diff"), "error": rec.error}
        shaped = False
        for k, run in enumerate(rec.runs, start=1):
            for row in ((run or {}).get("benchmark") or {}).get("per_shape_results", []):
                shaped = True
                fw, impl = row.get("framework") or {}, row.get("implementation") or {}
                s = row.get("speedup_vs_torch")
                raw = score(s, rec.correct)
                rows.append({**base, "repeat": k, "shape": row["case_idx"], "input_desc": json.dumps(row["input_desc"]),
                             "baseline_ms": fw.get("avg_latency_ms"), "solution_ms": impl.get("avg_latency_ms"),
                             "speedup": s, "score": raw, "weighted_score": raw * TIER_WEIGHTS.get(rec.sub.case.tier, 1.0)})
        if not shaped:
            rows.append({**base, "repeat": None, "shape": None, "score": rec.raw_score, "weighted_score": rec.weighted_score})
    return rows


def write_csv(path: Path, records: list[Record]) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for row in csv_rows(records):
        w.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in CSV_FIELDS})
    write_atomic(str(path), buf.getvalue(), "utf-8")


# ---------------------------------------------------------------- summary

def best_per_task(records: list[Record]) -> dict[tuple[str, str], Record]:
    """(set, task) -> the submission that scores best (then the fastest, then the first)."""
    best: dict[tuple[str, str], Record] = {}
    for rec in records:
        k = (rec.sub.set, rec.sub.case.key)
        cur = best.get(k)
        if cur is None or _rank(rec) > _rank(cur):
            best[k] = rec
    return best


def _rank(rec: Record) -> tuple:
    return (rec.correct, rec.raw_score or 0.0, rec.speedup or 0.0, -rec.sub.round)


def summary(records: list[Record], found: Found, env: dict, options: dict) -> dict:
    statuses = Counter(r.status for r in records)
    types = Counter(t for r in records for t in r.lint.types)
    tiers: dict[str, dict] = defaultdict(lambda: {"submissions": 0, "passed": 0, "best_weighted_score": 0.0})
    for r in records:
        tiers[r.sub.case.tier]["submissions"] += 1
        tiers[r.sub.case.tier]["passed"] += r.correct
    for (_, _), rec in best_per_task(records).items():
        tiers[rec.sub.case.tier]["best_weighted_score"] += rec.weighted_score or 0.0
    speeds = [r.speedup for r in records if r.speedup]
    per_device = Counter(((run or {}).get("verify") or {}).get("environment", {}).get("visible_devices")
                         for r in records for run in r.runs)
    env = {**env, "jobs_per_visible_device": {str(k): n for k, n in sorted(per_device.items(), key=str)}}
    return {
        "tool": {"name": "tritonlint", "version": __version__}, "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "options": options, "environment": env,
        "total": len(records), "by_status": {s: statuses.get(s, 0) for s in STATUSES},
        "degradation_types": {t: types.get(t, 0) for t in ("1", "2", "3", "4", "other")},
        "by_tier": dict(sorted(tiers.items())),
        "geomean_speedup": _geomean(speeds), **kernel_metrics(records),
        "unmatched_files": found.unmatched, "meta_errors": found.meta_errors,
        "submissions": [{"submission": r.sub.key, "set": r.sub.set, "task": r.sub.case.key, "round": r.sub.round,
                         "status": r.status, "speedup": r.speedup, "score": r.raw_score, "weighted_score": r.weighted_score,
                         "stats": r.stats(), "error": r.error,
                         "samples": {"speedup": r.speedups, "solution_ms": r.solution_ms,
                                     "times_ms": r.times("implementation")}} for r in records],
    }


def kernel_metrics(records: list[Record]) -> dict:
    """What kernel-generation papers report: KernelBench's fast_p over all submissions, and
    pass@k over each task's generations (unbiased estimator), averaged over tasks."""
    per_task: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        row = per_task[f"{r.sub.set}/{r.sub.case.key}"]
        row[0] += 1
        row[1] += r.correct
    return {"fast_p": fast_p([(r.correct, r.speedup) for r in records]),
            "pass_at_k": pass_at_ks({t: (n, c) for t, (n, c) in per_task.items()})}


def _geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


# ---------------------------------------------------------------- teams

def team_json(team: str, records: list[Record], meta: dict, device: dict, options: dict) -> dict:
    cases = []
    for rec in sorted(records, key=lambda r: (r.sub.case.tier, r.sub.case.name)):
        cases.append({"case": rec.sub.case.name, "tier": rec.sub.case.tier, "status": rec.status,
                      "correctness": rec.correct, "max_abs_diff": rec.diff("max_abs_diff"),
                      "max_rel_diff": rec.diff("max_rel_diff"),
                      "baseline_ms": statistics.fmean(rec.baseline_ms) if rec.baseline_ms else None,
                      "solution_ms": statistics.fmean(rec.solution_ms) if rec.solution_ms else None,
                      "speedup": rec.speedup, "score": rec.raw_score, "weighted_score": rec.weighted_score,
                      "error": rec.error})
    passed = sum(c["correctness"] for c in cases)
    speeds = [c["speedup"] for c in cases if c["speedup"]]
    return {"team_name": team, "meta": meta, "device": device,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "bench_config": options, "cases": cases,
            "summary": {"total": len(cases), "passed": passed, "failed": len(cases) - passed,
                        "total_weighted_score": round(sum(c["weighted_score"] or 0.0 for c in cases), 4),
                        "avg_speedup": statistics.fmean(speeds) if speeds else None}}


def leaderboard(teams: list[dict]) -> list[dict]:
    rows = sorted(teams, key=lambda t: (-t["summary"]["total_weighted_score"], -t["summary"]["passed"], t["team_name"]))
    return [{"rank": i, "team_name": t["team_name"], **t["summary"]} for i, t in enumerate(rows, start=1)]


def leaderboard_md(board: list[dict]) -> str:
    lines = ["| rank | team | passed | total | weighted score | avg speedup |", "|---:|---|---:|---:|---:|---:|"]
    for r in board:
        avg = f"{r['avg_speedup']:.2f}×" if r["avg_speedup"] else "–"
        lines.append(f"| {r['rank']} | {r['team_name']} | {r['passed']} | {r['total']} | {r['total_weighted_score']:.1f} | {avg} |")
    return "\n".join(lines) + "\n"


def write_all(out: Path, records: list[Record], found: Found, env: dict, options: dict) -> dict:
    device = device_of(records, env)
    by_kernel: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for rec in records:
        by_kernel[(rec.sub.set, rec.sub.case.name)].append(rec)
    for (set_, _), recs in sorted(by_kernel.items()):
        write_json(out / "kernels" / set_ / f"{recs[0].sub.case.name}.json",
                   seed004(recs[0].sub.case, recs, device, baseline_of(options)))
    write_csv(out / "results.csv", records)
    summ = summary(records, found, env, options)
    write_json(out / "summary.json", summ)
    team_records: dict[str, list[Record]] = defaultdict(list)
    for rec in records:
        if rec.sub.layout == TEAM:
            team_records[rec.sub.set].append(rec)
    teams = [team_json(t, recs, found.meta.get(t, {}), device, options) for t, recs in sorted(team_records.items())]
    for t in teams:
        write_json(out / "teams" / f"{t['team_name']}.json", t)
    if teams:
        board = leaderboard(teams)
        write_json(out / "leaderboard.json", board)
        write_atomic(str(out / "leaderboard.md"), leaderboard_md(board), "utf-8")
    return {"summary": summ, "teams": teams, "device": device}
