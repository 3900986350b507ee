"""`tritonlint eval` end to end on the CPU backend: a generated set (correct, wrong,
degraded and hanging submissions for two tasks, in Bench Lite's team layout) and every
file the run writes; resuming; the other two layouts; the worker pool with 2 CPU
workers; the statistics; --compare."""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import zlib
from importlib.resources import files

import jsonschema
import pytest

from _pool_jobs import job
from conftest import ROOT, requires
from tritonlint.evaluate.discover import GENERATIONS, SEED002, TEAM, discover_submissions
from tritonlint.evaluate.stats import paired, summary, t_quantile, t_two_sided_p, welch
from tritonlint.evaluate.workers import LocalPool
from tritonlint.runtime_check.options import DEFAULTS, GateOptions
from tritonlint.runtime_check.tasks import discover_cases

CASES = ROOT / "cases"
needs_gate = requires("triton", "matplotlib")
SEED004 = jsonschema.Draft202012Validator(json.loads((files("tritonlint") / "schema" / "seed004.schema.json").read_text()))
TASKS = {"gelu": ("t1", "0.5 * x", "0.25 * x"), "softmax": ("t1", "e / tl.sum(", "2.0 * e / tl.sum(")}


def solution(task: str) -> str:
    tier = TASKS[task][0]
    return (CASES / tier / task / f"{task}_triton_ascend_impl.py").read_text()


def make_set(root):
    """Four teams: correct, wrong maths, degraded (lint), hanging (forward sleeps)."""
    for task, (tier, good, bad) in TASKS.items():
        src = solution(task)
        assert good in src
        variants = {
            "correct": src,
            "wrong": src.replace(good, bad),
            "degraded": (CASES / tier / task / "degraded" / f"{task}_type3.py").read_text(),
            "hanging": src.replace("import torch\n", "import time\nimport torch\n", 1)
                          .replace("    def forward(self, x):\n", "    def forward(self, x):\n        time.sleep(3600)\n", 1),
        }
        for team, text in variants.items():
            (root / team / tier).mkdir(parents=True, exist_ok=True)
            (root / team / tier / f"{task}.py").write_text(text)
    (root / "correct" / "meta.json").write_text(json.dumps({"team": "correct", "model": "hand-written"}))
    (root / "notes.py").write_text("x = 1\n")  # fits no layout


def run_eval(*args, timeout=900):
    proc = subprocess.run([sys.executable, "-m", "tritonlint", "eval", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def png_dpi(path) -> float:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    i = data.index(b"pHYs")
    x, _, unit = struct.unpack(">IIB", data[i + 4:i + 13])
    assert unit == 1 and zlib.crc32(data[i:i + 13]) == struct.unpack(">I", data[i + 13:i + 17])[0]
    return x * 0.0254


@needs_gate
@pytest.mark.slow
def test_eval_end_to_end_on_cpu(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    make_set(subs)
    args = [subs, "--backend", "cpu", "--out", out, "--seeds", "1", "--timeout", "15", "--workers", "2", "-j", "2"]
    first = run_eval(*args)
    assert first.returncode == 0, first.stderr
    assert "8 submissions (2 passed, 2 incorrect, 2 timeout, 2 lint_rejected)" in first.stdout
    assert "[6/6]" in first.stderr and "ETA" in first.stderr  # plain progress lines off a terminal
    assert "1 .py file(s) fit no layout" in first.stderr

    # seed 004, one file per team and task, schema-valid
    kernels = sorted(p.relative_to(out).as_posix() for p in (out / "kernels").rglob("*.json"))
    assert kernels == [f"kernels/{team}/{task}.json" for team in ("correct", "degraded", "hanging", "wrong")
                       for task in ("gelu", "softmax")]
    for k in kernels:
        SEED004.validate(json.loads((out / k).read_text()))
    good = json.loads((out / "kernels/correct/gelu.json").read_text())
    assert good["success_rate"] == 1.0 and good["generations"][0]["compiled"] is True
    assert good["generations"][0]["max_diff"] < 1e-5 and good["generations"][0]["generated_code"] == solution("gelu")
    assert good["kernel_signature"]["inputs"]["x"]["dtype"] == "float32" and "def forward(self, x):" in good["kernel_signature"]["code"]
    assert good["kernel_signature"]["outputs"]["out0"]["shape"] == good["kernel_signature"]["inputs"]["x"]["shape"]
    hang = json.loads((out / "kernels/hanging/softmax.json").read_text())["generations"][0]
    assert (hang["compiled"], hang["status"]) == (False, "timeout") and "max_diff" not in hang
    lint = json.loads((out / "kernels/degraded/gelu.json").read_text())["generations"][0]
    assert (lint["status"], lint["regression_type"], lint["lint_codes"]) == ("lint_rejected", 3, ["TL003"])

    # results.csv: one row per submission (nothing timed on cpu, so one shape-less row each)
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == 8
    status = {(r["set"], r["task"]): r["status"] for r in rows}
    assert status == {(t, k): s for t, s in (("correct", "passed"), ("wrong", "incorrect"), ("degraded", "lint_rejected"),
                                             ("hanging", "timeout")) for k in ("gelu", "softmax")}
    wrong = next(r for r in rows if r["set"] == "wrong" and r["task"] == "gelu")
    assert "MismatchError" in wrong["error"] and float(wrong["max_abs_diff"]) > 0.1

    # summary.json
    s = json.loads((out / "summary.json").read_text())
    assert s["total"] == 8 and s["by_status"]["passed"] == 2 and s["by_status"]["timeout"] == 2
    assert s["degradation_types"] == {"1": 0, "2": 0, "3": 2, "4": 0, "other": 0}
    assert s["unmatched_files"] == ["notes.py"] and s["environment"]["workers"] == 2
    assert s["fast_p"]["fast_0"] == 2 / 8 and s["fast_p"]["fast_1"] is not None  # 2 of 8 correct
    assert set(s["pass_at_k"]) == {"pass@1", "pass@5", "pass@10"}
    assert "fast_0 (correct and" in (out / "report.md").read_text()

    # team files with the official runner's fields, and the leaderboard
    team = json.loads((out / "teams/correct.json").read_text())
    assert set(team) == {"team_name", "meta", "device", "timestamp", "bench_config", "cases", "summary"}
    assert team["meta"] == {"team": "correct", "model": "hand-written"}
    assert set(team["cases"][0]) == {"case", "tier", "status", "correctness", "max_abs_diff", "max_rel_diff",
                                     "baseline_ms", "solution_ms", "speedup", "score", "weighted_score", "error"}
    assert team["summary"] == {"total": 2, "passed": 2, "failed": 0, "total_weighted_score": 0.0, "avg_speedup": None}
    board = json.loads((out / "leaderboard.json").read_text())
    assert [b["team_name"] for b in board][0] == "correct" and len(board) == 4

    # report.md and the charts it embeds: only what this run can show
    report = (out / "report.md").read_text()
    assert "| gelu | t1 | 4 | 1 | 0 | 0 | 1 | 0 | 0 |" in report and "## Leaderboard" in report
    assert "cpu backend" in report and "`hanging/t1/gelu.py`: timeout" in report
    assert "![degradation types](charts/degradation_types.png)" in report
    assert "*speedup per task: nothing to plot in this run.*" in report
    assert sorted(p.name for p in (out / "charts").iterdir()) == ["degradation_types.png"]
    assert png_dpi(out / "charts" / "degradation_types.png") == pytest.approx(300, abs=0.5)

    # resume: nothing changed -> nothing runs; one changed file and one lost result -> two jobs
    again = run_eval(*args)
    assert "6 finished job(s) reused, 0 to run" in again.stderr
    (subs / "wrong" / "t1" / "gelu.py").write_text(solution("gelu"))
    lost = next((out / "runs").iterdir())
    lost.unlink()
    third = run_eval(*args)
    assert "to run" in third.stderr and "[2/2]" in third.stderr and "[3/" not in third.stderr
    assert "3 passed" in third.stdout


def test_discovery_of_the_three_layouts(tmp_path):
    cases = discover_cases(CASES)
    (tmp_path / "team_x" / "t1").mkdir(parents=True)
    (tmp_path / "team_x" / "t1" / "gelu.py").write_text("")
    (tmp_path / "team_x" / "meta.json").write_text("{broken")
    for name in ("gen_10.py", "gen_2.py"):
        (tmp_path / "model_a" / "softmax").mkdir(parents=True, exist_ok=True)
        (tmp_path / "model_a" / "softmax" / name).write_text("")
    (tmp_path / "verify").mkdir()
    (tmp_path / "verify" / "add_rmsnorm_quant_triton_ascend_impl.py").write_text("")
    (tmp_path / "verify" / "add_rmsnorm_quant_torch.py").write_text("")
    (tmp_path / "misc.py").write_text("")
    found = discover_submissions(tmp_path, cases)
    got = [(s.key, s.case.key, s.set, s.round, s.layout) for s in found.submissions]
    assert got == [
        ("team_x/t1/gelu.py", "t1/gelu", "team_x", 0, TEAM),
        ("model_a/softmax/gen_2.py", "t1/softmax", "model_a", 2, GENERATIONS),
        ("model_a/softmax/gen_10.py", "t1/softmax", "model_a", 10, GENERATIONS),
        ("verify/add_rmsnorm_quant_triton_ascend_impl.py", "t2/add_rmsnorm_quant", "verify", 0, SEED002),
    ]
    assert found.unmatched == ["misc.py"] and "meta.json" in found.meta_errors[0]


def test_worker_pool_survives_dead_and_hung_workers():
    results = {}
    jobs = [{"n": i, "do": "ok"} for i in range(6)] + [{"n": 6, "do": "die"}, {"n": 7, "do": "hang"}, {"n": 8, "do": "ok"}]
    LocalPool("cuda", workers=2, devices=2, job_timeout=8, fn=job).run(jobs, lambda j, r: results.__setitem__(j["n"], r))
    assert sorted(results) == list(range(9)), results
    assert results[6]["error"]["error_type"] == "WorkerCrash" and "code 7" in results[6]["error"]["error_msg"]
    assert results[7]["error"]["error_type"] == "WorkerTimeout"
    ok = [results[i] for i in (0, 1, 2, 3, 4, 5, 8)]
    assert all("pid" in r for r in ok), results
    assert {r["visible"] for r in ok} == {"0", "1"}  # worker i sees device i only
    assert len({r["pid"] for r in ok}) >= 2


def test_a_task_s_jobs_stay_on_one_worker_and_repeats_stay_in_passes():
    """Each worker keeps its task's reference run: two tasks on two workers run on one worker each,
    and the second pass starts after the first."""
    order, results = [], {}
    jobs = [{"n": 10 * r + i, "do": "nap", "reference": f"task{i % 2}.py", "repeat": r} for r in range(2) for i in range(6)]
    LocalPool("cuda", workers=2, devices=2, job_timeout=30, fn=job).run(
        jobs, lambda j, res: (order.append(j["n"]), results.__setitem__(j["n"], res)))
    pids = {t: {results[j["n"]]["pid"] for j in jobs if j["reference"] == f"task{t}.py"} for t in (0, 1)}
    assert len(pids[0]) == len(pids[1]) == 1 and pids[0] != pids[1], pids
    assert max(order.index(n) for n in range(6)) < min(order.index(n) for n in range(10, 16)), order


def test_statistics_against_known_values():
    assert t_quantile(0.975, 10) == pytest.approx(2.228138852, rel=1e-8)
    assert t_quantile(0.975, 1) == pytest.approx(12.70620474, rel=1e-8)
    for t in (0.5, 2.0, 7.0):  # closed forms: df 1 is Cauchy, df 2 has an algebraic cdf
        assert t_two_sided_p(t, 1) == pytest.approx(1 - 2 / math.pi * math.atan(t), rel=1e-10)
        assert t_two_sided_p(t, 2) == pytest.approx(1 - t / math.sqrt(t * t + 2), rel=1e-10)
    s = summary([1.0, 2.0, 3.0, 4.0])
    assert s["std"] == pytest.approx(1.2909944) and s["ci95"][0] == pytest.approx(2.5 - 3.182446305 * 1.2909944 / 2)
    w = welch([1, 2, 3, 4, 5], [3, 4, 5, 6, 7.5])
    assert w["t"] == pytest.approx(2.1 / 1.11**0.5) and w["df"] == pytest.approx(1.11**2 / (0.5**2 / 4 + 0.61**2 / 4))
    assert w["p"] == pytest.approx(t_two_sided_p(w["t"], w["df"])) and 0.05 < w["p"] < 0.1
    p = paired([1.0, 2.0, 3.0, 4.0], [1.1, 2.3, 3.2, 4.6])
    assert p["t"] == pytest.approx(0.3 / ((0.14 / 3) ** 0.5 / 2)) and p["df"] == 3
    assert summary([5.0])["ci95"] is None and welch([1.0], [2.0, 3.0]) is None


def _summary(speedups: dict[str, list[float]], ms: dict[str, list[float]]) -> dict:
    return {"submissions": [{"task": t, "submission": f"{t}.py", "status": "passed", "speedup": sum(s) / len(s),
                             "samples": {"speedup": s, "solution_ms": ms[t], "times_ms": ms[t]}}
                            for t, s in speedups.items()]}


def test_compare_two_runs(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "summary.json").write_text(json.dumps(_summary(
        {"t1/gelu": [1.0, 1.0, 1.0], "t1/softmax": [1.2, 1.25, 1.22], "t2/rope": [5.0, 5.1, 4.9]},
        {"t1/gelu": [1.0, 1.01, 0.99], "t1/softmax": [0.50, 0.51, 0.49], "t2/rope": [0.2, 0.21, 0.19]})))
    (b / "summary.json").write_text(json.dumps(_summary(
        {"t1/gelu": [2.0, 2.0, 2.0], "t1/softmax": [1.21, 1.24, 1.23], "t2/rope": [4.0, 4.1, 3.9]},
        {"t1/gelu": [0.50, 0.51, 0.49], "t1/softmax": [0.50, 0.49, 0.51], "t2/rope": [0.25, 0.26, 0.24]})))
    proc = run_eval("--compare", a, b, "--out", tmp_path / "cmp")
    assert proc.returncode == 0, proc.stderr
    c = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert c["faster"] == ["t1/gelu"] and c["slower"] == ["t2/rope"]
    verdict = {r["task"]: (r["verdict"], r["basis"]) for r in c["tasks"]}
    assert verdict["t1/softmax"] == ("no significant change", "whole-run repeats")
    assert c["overall"]["df"] == 2 and "paired t-test" in (tmp_path / "cmp" / "compare.md").read_text()
    bad = run_eval("--compare", a, tmp_path / "nope")
    assert bad.returncode == 2 and "no summary.json" in bad.stderr
    other = tmp_path / "other"
    other.mkdir()
    (other / "summary.json").write_text(json.dumps(_summary({"t3/decode_mla": [2.0, 2.1]}, {"t3/decode_mla": [0.1, 0.11]})))
    disjoint = run_eval("--compare", a, other, "--out", tmp_path / "cmp2")
    assert disjoint.returncode == 2 and "have no task in common" in disjoint.stderr
    assert "no task in common" in (tmp_path / "cmp2" / "compare.md").read_text()


def test_compare_warns_when_the_runs_have_different_baselines(tmp_path):
    runs = {}
    for name, baseline in (("eager", None), ("compiled", "compile")):
        runs[name] = tmp_path / name
        runs[name].mkdir()
        summ = _summary({"t1/gelu": [2.0, 2.1, 1.9]}, {"t1/gelu": [0.5, 0.51, 0.49]})
        if baseline:
            summ["options"] = {"gate": {"baseline": baseline}}
        (runs[name] / "summary.json").write_text(json.dumps(summ))
    mixed = run_eval("--compare", runs["eager"], runs["compiled"], "--out", tmp_path / "cmp")
    assert mixed.returncode == 0, mixed.stderr
    warning = ("tritonlint eval --compare: warning: A's speedups are against eager PyTorch, B's against torch.compile: "
               "the speedup columns and the overall test mix two baselines (the per-task latency tests do not)")
    assert warning in mixed.stderr.splitlines()
    c = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert c["baselines"] == {"a": "eager", "b": "compile"}
    assert "> **Warning:** A's speedups are against eager PyTorch" in (tmp_path / "cmp" / "compare.md").read_text()
    same = run_eval("--compare", runs["compiled"], runs["compiled"], "--out", tmp_path / "cmp2")
    assert same.returncode == 0 and "warning" not in same.stderr
    assert json.loads((tmp_path / "cmp2" / "compare.json").read_text())["warning"] is None


def test_seed004_baseline_says_which_baseline_and_whether_it_compiled(tmp_path):
    """Seed 004's `baseline.compiled` is 'the code compiled successfully': false only when
    torch.compile failed on the reference; `kind` is what was timed."""
    from tritonlint.evaluate.outputs import seed004
    from tritonlint.evaluate.records import Lint, Record

    (tmp_path / "gelu").mkdir()
    (tmp_path / "gelu" / "g1.py").write_text(solution("gelu"))
    sub = discover_submissions(tmp_path, discover_cases(CASES)).submissions[0]
    lint = Lint("ok", True, None, [], [], 0, 0)
    verified = {"total_cases": 1, "passed_cases": 1, "failures": []}
    timed = {"verify": verified, "verdict": "passed", "benchmark": {
        "speedup_vs_torch": 1.5, "framework": {"avg_latency_ms": 0.3}, "implementation": {"avg_latency_ms": 0.2},
        "per_shape_results": [{"error_type": None}]}}
    uncompiled = {"verify": verified, "verdict": "not_timed", "benchmark": {
        "speedup_vs_torch": None, "framework": {"avg_latency_ms": None}, "implementation": {"avg_latency_ms": None},
        "per_shape_results": [{"error_type": "BaselineCompileError", "error_msg": "torch.compile of the reference failed"}]}}

    def baseline(runs: list[dict], kind: str) -> dict:
        doc = seed004(sub.case, [Record(sub, lint, runs)], {"name": "test"}, kind)
        SEED004.validate(doc)
        return doc["baseline"]

    assert baseline([timed], "eager") == {"compiled": True, "kind": "eager", "time": 0.3}
    assert baseline([timed], "compile") == {"compiled": True, "kind": "compile", "time": 0.3}
    assert baseline([uncompiled], "compile") == {"compiled": False, "kind": "compile"}
    assert baseline([], "compile") == {"compiled": True, "kind": "compile"}  # not gated: nothing failed to compile


def test_eval_names_the_baseline_in_its_outputs(tmp_path):
    (tmp_path / "subs" / "gelu").mkdir(parents=True)
    (tmp_path / "subs" / "gelu" / "g1.py").write_text(solution("gelu"))
    for kind in ("compile", "eager"):
        out = tmp_path / kind
        run = run_eval(tmp_path / "subs", "--lint-only", "--baseline", kind, "--out", out)
        assert run.returncode == 0, run.stderr
        assert json.loads((out / "summary.json").read_text())["options"]["gate"]["baseline"] == kind
        kernel = json.loads((out / "kernels" / "default" / "gelu.json").read_text())
        assert kernel["baseline"] == {"compiled": True, "kind": kind}
    assert "speedups against torch.compile." in (tmp_path / "compile" / "report.md").read_text()
    assert "speedups against eager PyTorch." in (tmp_path / "eager" / "report.md").read_text()
    bad = run_eval(tmp_path / "subs", "--lint-only", "--baseline", "jit", "--out", tmp_path / "bad")
    assert bad.returncode == 2 and "argument --baseline: invalid choice: 'jit'" in bad.stderr and not (tmp_path / "bad").exists()


def test_eval_usage_errors(tmp_path):
    assert run_eval(tmp_path / "missing").returncode == 2
    r = run_eval(tmp_path, "--repeats", "0")
    assert r.returncode == 2 and "--repeats must be at least 1" in r.stderr
    r = run_eval(tmp_path, "--report-only")
    assert r.returncode == 2 and "--report-only needs the --backend" in r.stderr
    empty = run_eval(tmp_path, "--lint-only", "--out", tmp_path / "out")  # nothing to evaluate is a usage error
    assert empty.returncode == 2 and "no submission fits a layout" in empty.stderr


@requires("torch")
def test_eval_without_a_device_says_so_in_one_line(tmp_path):
    import torch

    if torch.cuda.is_available() or importlib.util.find_spec("torch_npu"):
        pytest.skip("this machine has an accelerator")
    (tmp_path / "subs" / "gelu").mkdir(parents=True)
    shutil.copy(CASES / "t1" / "gelu" / "gelu_triton_ascend_impl.py", tmp_path / "subs" / "gelu" / "g1.py")
    r = run_eval(tmp_path / "subs", "--out", tmp_path / "out")
    assert r.returncode == 2
    assert r.stderr.strip() == "tritonlint eval: error: no NPU or CUDA device found (use --backend cpu for a correctness-only run)"
    # in process: the worker started on the likely backend (cuda) before the detection is gone with the error
    import multiprocessing

    from tritonlint.evaluate.run import EvalOptions, evaluate
    from tritonlint.runtime_check.backends import BackendUnavailable

    with pytest.raises(BackendUnavailable):
        evaluate(EvalOptions(tmp_path / "subs", CASES, tmp_path / "out2"))
    assert multiprocessing.active_children() == []


@requires("ray")  # the [ray] extra
@pytest.mark.slow
def test_ray_engine_runs_the_same_jobs(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    for team, text in (("a", solution("gelu")), ("b", solution("gelu").replace("0.5 * x", "0.25 * x"))):
        (subs / team / "t1").mkdir(parents=True)
        (subs / team / "t1" / "gelu.py").write_text(text)
    proc = run_eval(subs, "--backend", "cpu", "--out", out, "--seeds", "1", "--engine", "ray", "--lint-only")
    assert proc.returncode == 0  # lint-only never starts ray
    shutil.rmtree(out)
    proc = run_eval(subs, "--backend", "cpu", "--out", out, "--seeds", "1", "--engine", "ray")
    assert proc.returncode == 0, proc.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["by_status"]["passed"] == 1 and s["by_status"]["incorrect"] == 1 and s["environment"]["engine"] == "ray"


def test_progress_on_a_terminal_and_off_it():
    import io

    from tritonlint.evaluate.progress import Progress

    jobs = [("a/t1/gelu.py#r1", "t1/gelu"), ("b/t1/gelu.py#r1", "t1/gelu"), ("a/t2/rope.py#r1", "t2/rope")]
    for rich in (True, False):
        stream = io.StringIO()
        p = Progress(rich=rich, stream=stream)
        p.start(jobs, reused=2)
        for key, task in jobs:
            p.done(key, task, "passed 1.50x")
        p.finish()
        text = stream.getvalue()
        assert "resuming: 2 finished job(s) reused, 3 to run" in text
        if rich:  # bars per task and overall, counted to the end
            assert "t1/gelu" in text and "t2/rope" in text and "3/3" in text and "2/2" in text
        else:
            assert "[3/3] a/t2/rope.py#r1: passed 1.50x" in text and "ETA" in text


def test_lint_only_evaluation_never_imports_torch(tmp_path):
    code = ("import sys, tritonlint.evaluate.cli as c; c.main(['" + str(tmp_path) + "', '--lint-only', '--out', '"
            + str(tmp_path / "out") + "']); print('torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("False"), proc.stderr


def test_the_same_gate_options_give_the_same_resume_key():
    """eval hashes GateOptions.to_json() into the key of every finished job (evaluate/run.py):
    a new field, or a changed default, would make a resumed run redo every job."""
    assert DEFAULTS.to_json() == {"seeds": 3, "timeout": 900.0, "policy": "mere_mare", "warmup": 5, "repeats": 50,
                                  "operators": False, "fresh_cache": False}
    probed = GateOptions(reference="task.py", seeds=1, probe_state=True)
    assert GateOptions.from_json(probed.to_json(), reference="task.py") == probed
    assert GateOptions(baseline="eager").to_json() == DEFAULTS.to_json()  # the default baseline leaves the key out
    compiled = GateOptions(reference="task.py", baseline="compile")
    assert compiled.to_json() == {**DEFAULTS.to_json(), "baseline": "compile"}  # and a compile run never resumes an eager one
    assert GateOptions.from_json(compiled.to_json(), reference="task.py") == compiled
    with pytest.raises(ValueError, match="baseline must be one of eager, compile, not 'jit'"):
        GateOptions(baseline="jit")


def test_eval_status_follows_the_gate_verdict():
    """A run that verified but failed its timing (work on another stream) is not `passed` in eval either."""
    from tritonlint.evaluate.records import run_status

    verified = {"total_cases": 3, "passed_cases": 3, "failures": []}
    assert run_status({"verify": verified, "verdict": "untimed_work"}) == "failed"
    assert run_status({"verify": verified, "verdict": "passed"}) == "passed"
    assert run_status({"verify": verified, "verdict": "incorrect"}) == "incorrect"
    assert run_status({"verify": verified}) == "passed"  # runs/ from before the verdict existed


def test_a_submission_that_failed_after_its_cases_says_why_in_eval(tmp_path):
    """results.csv's `error` for a run whose cases passed and whose timing or census did not: the
    gate's own line, not an empty field."""
    from tritonlint.evaluate.records import Lint, Record

    (tmp_path / "gelu").mkdir()
    (tmp_path / "gelu" / "g1.py").write_text(solution("gelu"))
    sub = discover_submissions(tmp_path, discover_cases(CASES)).submissions[0]
    verified = {"total_cases": 3, "passed_cases": 3, "failures": []}
    why = "timing: TimingRefused: the child claims 0.0100 ms per call, but its 60 calls took 900.0 ms on the parent's clock"
    rec = Record(sub, Lint("ok", True, None, [], [], 0, 0), [{"verify": verified, "verdict": "untimed_work", "why": why}])
    assert (rec.status, rec.error) == ("failed", f"untimed_work: {why}")
    passed = Record(sub, Lint("ok", True, None, [], [], 0, 0), [{"verify": verified, "verdict": "passed", "why": "3/3 cases passed"}])
    assert (passed.status, passed.error) == ("passed", None)


def test_kernel_generation_metrics_against_closed_forms():
    """pass@k: the unbiased estimator 1 - C(n-c, k)/C(n, k); fast_p: correct and at least p times faster."""
    from math import comb

    from tritonlint.evaluate.stats import fast_p, pass_at_k, pass_at_ks

    for n, c, k in [(10, 3, 1), (10, 3, 5), (20, 0, 5), (5, 5, 1), (7, 2, 3), (50, 7, 10)]:
        assert abs(pass_at_k(n, c, k) - (1 - comb(n - c, k) / comb(n, k))) < 1e-12
    got = pass_at_ks({"a": (10, 3), "b": (10, 0)}, ks=(1, 20))
    assert abs(got["pass@1"] - 0.15) < 1e-12 and got["pass@20"] is None  # 20 > n: not estimable
    assert fast_p([(True, 2.1), (True, 0.9), (False, None), (True, 1.5)]) == {"fast_0": 0.75, "fast_1": 0.5, "fast_1.5": 0.5, "fast_2": 0.25}


def test_eval_with_nothing_to_evaluate_says_why(tmp_path):
    (tmp_path / "stuff").mkdir()
    (tmp_path / "stuff" / "notes.py").write_text("x = 1\n")
    run = subprocess.run([sys.executable, "-m", "tritonlint", "eval", str(tmp_path), "--lint-only", "--out", str(tmp_path / "o")],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "no submission fits a layout" in run.stderr and "stuff/notes.py: fits no task" in run.stderr


def test_eval_unwritable_output_is_one_line(tmp_path):
    (tmp_path / "subs" / "gelu").mkdir(parents=True)
    shutil.copy(CASES / "t1" / "gelu" / "gelu_triton_ascend_impl.py", tmp_path / "subs" / "gelu" / "g1.py")
    (tmp_path / "blocker").write_text("a file, not a folder")
    r = run_eval(tmp_path / "subs", "--lint-only", "--out", tmp_path / "blocker" / "out")
    assert r.returncode == 2 and r.stderr.startswith(f"tritonlint eval: error: --out {tmp_path / 'blocker' / 'out'}: cannot write")
    assert "Traceback" not in r.stderr


@needs_gate
def test_eval_writes_its_outputs_while_its_workers_shut_down_and_returns_once_they_are_gone(tmp_path, monkeypatch):
    import multiprocessing
    import threading

    from tritonlint.evaluate.run import EvalOptions, evaluate

    (tmp_path / "subs").mkdir()
    shutil.copy(CASES / "t1" / "gelu" / "gelu_triton_ascend_impl.py", tmp_path / "subs")
    writing, seen = threading.Event(), {}
    close = LocalPool.close

    def close_once_writing(pool):  # a close that comes before the outputs are written waits here, and fails below
        seen["closed_while_writing"] = writing.wait(timeout=20)
        close(pool)

    def write(records, found, env):
        writing.set()
        seen["status"] = [r.status for r in records]

    monkeypatch.setattr(LocalPool, "close", close_once_writing)
    opts = EvalOptions(tmp_path / "subs", CASES, tmp_path / "out", backend="cpu", gate=GateOptions(seeds=1, timeout=60))
    records, _, env = evaluate(opts, write=write)
    assert seen == {"closed_while_writing": True, "status": ["passed"]}, seen
    assert multiprocessing.active_children() == [] and env["workers"] == 1


def test_a_worker_binds_the_device_it_is_given_among_those_its_parent_sees(monkeypatch):
    from tritonlint.evaluate.workers import _bind

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    _bind("cuda", 1)  # the second device the parent sees is the machine's 5, not its 1
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "5"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    _bind("cuda", 1)
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "1"
