"""Seed 002's benchmark: every L1 gate exit path, the perf_result.json shape, the
speedup bookkeeping and seed 001's score anchors."""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, requires_triton
from tritonlint.runtime_check.score import overall_speedup, score, weighted

GELU = ROOT / "cases" / "t1" / "gelu"


def bench(folder, *extra):
    return subprocess.run([sys.executable, "-m", "tritonlint.runtime_check.benchmark", "--op_name", "gelu",
                           "--verify_dir", str(folder), "--backend", "cpu", "--warmup", "1", "--repeats", "3", *extra],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def folder(tmp_path):
    for src in (GELU / "gelu_torch.py", GELU / "gelu_triton_ascend_impl.py"):
        shutil.copy(src, tmp_path / src.name)
    return tmp_path


def failures(n):
    return [{"case_idx": i, "error_type": "MismatchError", "error_msg": f"output 0: case {i} off"} for i in range(1, n + 1)]


@pytest.mark.parametrize("content,expect", [
    (None, "does not exist"),
    ("{not json", "cannot be read"),
    (json.dumps({"total_cases": 0, "passed_cases": 0, "failures": []}), "ran no case (0/0)"),
    (json.dumps({"total_cases": 7, "passed_cases": 0, "failures": failures(7)}), "0/7 cases passed"),
])
def test_l1_gate_refuses_with_exit_2(folder, content, expect):
    if content is not None:
        (folder / "verify_result.json").write_text(content)
    run = bench(folder)
    assert run.returncode == 2 and expect in run.stderr
    assert str(folder / "verify_result.json") in run.stderr
    assert not (folder / "perf_result.json").exists()
    if "0/7" in expect:  # the first five failures, not more
        assert run.stderr.count("MismatchError") == 5


def test_gate_uses_the_impl_specific_verify_file(folder):
    (folder / "verify_result_optimized.json").write_text(json.dumps({"total_cases": 1, "passed_cases": 1}))
    run = bench(folder, "--triton_impl_name", "triton_optimized")
    assert run.returncode == 1  # the gate let it through; then the script fails: no such implementation
    assert "L1 gate" not in run.stderr and "gelu_triton_optimized.py not found" in run.stderr and run.stderr.startswith("benchmark: error")


@requires_triton
def test_benchmark_writes_seed_002_fields(folder):
    (folder / "verify_result.json").write_text(json.dumps({"total_cases": 1, "passed_cases": 1, "failures": []}))
    run = bench(folder)
    assert run.returncode == 0, run.stderr
    r = json.loads((folder / "perf_result.json").read_text())
    for key in ("op_name", "warmup", "repeats", "total_cases", "passed_cases", "failed_cases", "nan_indices", "inf_indices",
                "zero_indices", "negative_indices", "none_indices", "framework", "implementation", "speedup_vs_torch",
                "per_shape_results"):
        assert key in r, key
    row = r["per_shape_results"][0]
    assert row["status"] == "pass" and row["implementation"]["avg_latency_ms"] > 0
    assert "not a performance measurement" in r["timing"]
    assert r["implementation"]["operators"] == {}  # the profiler runs only when asked
    assert r["baseline"] == "eager"  # the default: the reference as written
    bypass = bench(folder, "--verify_not_required", "--skip_framework", "--framework_latency_ms", "2.0", "--operators")
    assert bypass.returncode == 0
    r = json.loads((folder / "perf_result.json").read_text())
    assert r["framework"]["avg_latency_ms"] == 2.0
    ops = r["implementation"]["operators"]  # {operator: ms per call}; the interpreter runs the kernel on the host
    assert ops and all(isinstance(ms, float) and ms > 0 for ms in ops.values())


def test_score_anchor_points():
    assert score(1.0, True) == 60.0
    assert score(5.0, True) == 100.0 and score(50.0, True) == 100.0
    assert score(3.0, True) == 80.0
    assert score(0.5, True) == 30.0
    assert score(2.0, False) == 0.0 and score(0.0, True) == 0.0 and score(float("nan"), True) == 0.0
    assert weighted(100.0, "t3") == 200.0 and weighted(60.0, "t2") == 90.0 and weighted(60.0, "t1") == 60.0


def test_speedup_bookkeeping_follows_seed_002():
    gm, buckets = overall_speedup([2.0, 8.0, None, float("nan"), 0.0, -1.0, float("inf")])
    assert gm == pytest.approx(4.0)
    assert buckets == {"none": [3], "nan": [4], "zero": [5], "negative": [6], "inf": [7]}
    assert overall_speedup([None, float("nan")])[0] is None
    assert math.isclose(overall_speedup([1.5])[0], 1.5)


@requires_triton
@pytest.mark.parametrize("name", ["timing_aware", "wrong_when_repeated"])
def test_timed_calls_must_still_be_right(folder, name):
    """Verified once per process, then different when timed: the shape fails, nothing is scored."""
    shutil.copy(ROOT / "tests" / "fixtures" / "hostile" / f"gelu_{name}.py", folder / "gelu_triton_ascend_impl.py")
    run = bench(folder, "--verify_not_required")
    assert run.returncode == 0, run.stderr
    r = json.loads((folder / "perf_result.json").read_text())
    row = r["per_shape_results"][0]
    assert (row["status"], row["error_type"]) == ("fail", "TimedOutputMismatch")
    assert "after the timed ones" in row["error_msg"] and r["speedup_vs_torch"] is None and r["none_indices"] == [1]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None or not __import__("torch").cuda.is_available(),
                    reason="needs a CUDA device (side streams); run on the device tool")
def test_work_on_a_side_stream_is_not_timed_as_free(folder):
    shutil.copy(ROOT / "tests" / "fixtures" / "hostile" / "gelu_side_stream.py", folder / "gelu_triton_ascend_impl.py")
    run = subprocess.run([sys.executable, "-m", "tritonlint.runtime_check.benchmark", "--op_name", "gelu", "--verify_dir",
                          str(folder), "--backend", "cuda", "--verify_not_required"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    row = json.loads((folder / "perf_result.json").read_text())["per_shape_results"][0]
    assert (row["status"], row["error_type"]) == ("fail", "UntimedWork") and "stream the events do not see" in row["error_msg"]


@requires_triton
def test_a_dead_timing_child_is_reported_like_a_dead_verify_child(folder):
    shutil.copy(ROOT / "tests" / "fixtures" / "hostile" / "gelu_abort.py", folder / "gelu_triton_ascend_impl.py")
    run = bench(folder, "--verify_not_required")
    assert run.returncode == 0, run.stderr
    row = json.loads((folder / "perf_result.json").read_text())["per_shape_results"][0]
    assert (row["status"], row["error_type"]) == ("fail", "Crash") and row["error_msg"].startswith("process killed by SIGABRT")


def test_the_verdict_names_the_baseline():
    from tritonlint.runtime_check.gate import verdict

    v = {"total_cases": 1, "passed_cases": 1, "failures": [], "policy": "mere_mare", "census": {"regression_type": None}}
    perf = {"speedup_vs_torch": 1.2, "framework": {"avg_latency_ms": 1.2}, "implementation": {"avg_latency_ms": 1.0},
            "per_shape_results": [{"error_type": None}], "baseline": "compile"}
    assert verdict(v, perf, True) == ("passed", "1/1 cases passed (mere_mare); speedup 1.20x vs torch.compile "
                                                "(framework 1.200 ms, implementation 1.000 ms)")
    assert "x (framework" in verdict(v, {**perf, "baseline": "eager"}, True)[1]  # eager says nothing new
    failed = {**perf, "speedup_vs_torch": None, "per_shape_results": [
        {"error_type": "BaselineCompileError", "error_msg": "torch.compile of the reference failed: InductorError: no g++"}]}
    assert verdict(v, failed, True) == ("not_timed", "timing: BaselineCompileError: torch.compile of the reference "
                                                     "failed: InductorError: no g++")


def test_a_bad_baseline_is_a_usage_error(folder):
    run = bench(folder, "--verify_not_required", "--baseline", "jit")
    assert run.returncode == 2 and "argument --baseline: invalid choice: 'jit'" in run.stderr and "Traceback" not in run.stderr


@pytest.fixture
def reference_as_candidate(folder):
    """The reference as its own candidate: the last-call check is bit-exact whatever the inputs, so
    these tests see only the baseline side (the Triton gelu's MARE is marginal on fresh inputs)."""
    (folder / "gelu_triton_ascend_impl.py").write_text((GELU / "gelu_torch.py").read_text() + "\nModelNew = Model\n")
    return folder


needs_cxx = pytest.mark.skipif(shutil.which("g++") is None and shutil.which("c++") is None,
                               reason="torch.compile on the CPU (inductor) needs a C++ compiler, and none is installed")


@requires_triton
@needs_cxx
@pytest.mark.slow
@pytest.mark.usefixtures("reference_as_candidate")
def test_compile_baseline_times_the_compiled_reference(folder):
    """Really compiled (inductor, in the reference's sandboxed child): the profiler sees the compiled
    region where the eager reference shows aten::gelu; the compile is untimed warmup."""
    run = bench(folder, "--verify_not_required", "--baseline", "compile", "--warmup", "0", "--operators")
    assert run.returncode == 0, run.stderr
    r = json.loads((folder / "perf_result.json").read_text())
    assert r["baseline"] == "compile" and r["per_shape_results"][0]["status"] == "pass", r["per_shape_results"][0]["error_msg"]
    assert r["framework"]["avg_latency_ms"] > 0 and r["speedup_vs_torch"] > 0
    assert max(r["per_shape_results"][0]["framework"]["times_ms"]) < 1000  # seconds of compiling are in none of them
    assert any(op.startswith("Torch-Compiled Region") for op in r["framework"]["operators"]), r["framework"]["operators"]
    assert "aten::gelu" not in r["framework"]["operators"]


@requires_triton
@pytest.mark.slow
@pytest.mark.usefixtures("reference_as_candidate")
def test_a_reference_that_cannot_compile_fails_the_shape_by_name(folder):
    """No C++ compiler on PATH (inductor needs one on the CPU): a BaselineCompileError, not a crash."""
    run = subprocess.run([sys.executable, "-m", "tritonlint.runtime_check.benchmark", "--op_name", "gelu", "--verify_dir",
                          str(folder), "--backend", "cpu", "--warmup", "1", "--repeats", "2", "--verify_not_required",
                          "--baseline", "compile"], capture_output=True, text=True, timeout=300, env={"PATH": str(folder)})
    assert run.returncode == 0, run.stderr
    r = json.loads((folder / "perf_result.json").read_text())
    row = r["per_shape_results"][0]
    assert (row["status"], row["error_type"]) == ("fail", "BaselineCompileError"), row
    assert row["error_msg"].startswith("torch.compile of the reference failed: ") and "C++ compiler" in row["error_msg"]
    assert r["speedup_vs_torch"] is None and r["framework"]["avg_latency_ms"] is None


@pytest.mark.skipif(importlib.util.find_spec("torch") is None or not __import__("torch").cuda.is_available(),
                    reason="needs a CUDA device; run on the device tool")
@pytest.mark.usefixtures("reference_as_candidate")
def test_compile_baseline_on_cuda(folder):
    run = subprocess.run([sys.executable, "-m", "tritonlint.runtime_check.benchmark", "--op_name", "gelu", "--verify_dir",
                          str(folder), "--backend", "cuda", "--verify_not_required", "--baseline", "compile", "--operators"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    r = json.loads((folder / "perf_result.json").read_text())
    assert r["baseline"] == "compile" and r["per_shape_results"][0]["status"] == "pass", r["per_shape_results"][0]["error_msg"]
    ops = r["framework"]["operators"]  # device time: the kernels inductor generated (triton_poi_fused_gelu_0, ...)
    assert any(op.startswith("triton_") for op in ops) and not any("Gelu" in op for op in ops), ops
