"""The isolated verifier on the CPU backend: a correct solution passes, and each
hostile submission fails for its own reason while the other cases still run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT, requires_triton

pytestmark = requires_triton

GELU = ROOT / "cases" / "t1" / "gelu"
HOSTILE = FIXTURES / "hostile"


def run_verify(impl, seeds=2, timeout=60, policy="mere_mare"):
    from tritonlint.runtime_check.backends import get_backend
    from tritonlint.runtime_check.verify import verify

    return verify(GELU / "gelu_torch.py", impl, get_backend("cpu"), seeds=seeds, timeout=timeout, policy=policy)


def only_errors(result) -> list[str]:
    return [f["error_type"] for f in result["failures"]]


def test_correct_solution_passes_every_seed():
    r = run_verify(GELU / "gelu_triton_ascend_impl.py", seeds=3)
    assert (r["total_cases"], r["passed_cases"], r["failures"]) == (3, 3, [])
    assert r["environment"]["backend"] == "cpu" and r["environment"]["torch"]


@pytest.mark.parametrize("name,error,check", [
    ("abort", "Crash", "SIGABRT"),
    ("segfault", "Crash", "SIGSEGV"),
    ("raises", "ValueError", "kernel failed to compile"),
    ("wrong_type", "OutputContract", "expected a tensor, got dict"),
    ("nan_output", "MismatchError", "NaN positions differ"),
    ("mutates_input", "InputModified", "input 0 was modified"),
    ("patches_comparison", "MismatchError", "MERE"),
    ("freed_memory", "MismatchError", "output 0"),
    ("gc_scavenger", "MismatchError", "output 0"),
    ("huge_print", "MismatchError", "output 0"),
])
def test_hostile_submission_fails_for_its_reason(name, error, check):
    r = run_verify(HOSTILE / f"gelu_{name}.py")
    assert r["total_cases"] == 2 and r["passed_cases"] == 0
    assert only_errors(r) == [error, error]  # every case ran and failed the same way
    assert check in r["failures"][0]["error_msg"]


def test_hang_is_killed_at_the_timeout():
    r = run_verify(HOSTILE / "gelu_hang.py", seeds=1, timeout=20)
    assert only_errors(r) == ["Timeout"]


def test_fresh_inputs_defeat_a_result_cache(tmp_path):
    cache = "/tmp/tritonlint-hostile-cache.pt"
    if os.path.exists(cache):
        os.remove(cache)
    try:
        r = run_verify(HOSTILE / "gelu_fingerprint_cache.py", seeds=2)
    finally:
        if os.path.exists(cache):
            os.remove(cache)
    failed = {f["case_idx"]: f for f in r["failures"]}
    assert 2 in failed  # the cached answer is the wrong one for fresh inputs
    if 1 in failed:  # in its own mount namespace the sandbox refuses the write to /tmp outright
        assert "Read-only file system" in failed[1]["error_msg"], failed[1]


def test_a_failure_says_why():
    r = run_verify(HOSTILE / "gelu_patches_comparison.py", seeds=1)
    f = r["failures"][0]
    assert f["check"] == "mere_mare" and f["stats"]["mare_limit"] == pytest.approx(10 * 2.0**-13)
    worst = f["worst"][0]
    assert set(worst) == {"index", "candidate", "reference", "abs_err", "rel_err"} and worst["candidate"] == 0.0


def test_seed_002_command_line(tmp_path):
    for src in (GELU / "gelu_torch.py", GELU / "gelu_triton_ascend_impl.py"):
        shutil.copy(src, tmp_path / src.name)
    shutil.copy(HOSTILE / "gelu_raises.py", tmp_path / "gelu_triton_bad.py")
    cmd = [sys.executable, "-m", "tritonlint.runtime_check.verify", "--op_name", "gelu", "--verify_dir", str(tmp_path),
           "--backend", "cpu", "--timeout", "120", "--seeds", "1"]
    ok = subprocess.run(cmd, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    result = json.loads((tmp_path / "verify_result.json").read_text())
    assert {"op_name", "total_cases", "passed_cases", "failed_cases", "failures"} <= set(result)
    bad = subprocess.run(cmd + ["--triton_impl_name", "triton_bad"], capture_output=True, text=True)
    assert bad.returncode == 1
    failed = json.loads((tmp_path / "verify_result_bad.json").read_text())
    assert failed["failures"][0]["error_type"] == "ValueError"
    assert failed["failures"][0]["input_desc"] == [{"type": "tensor", "shape": [4, 8, 100], "dtype": "torch.float32"}]
    missing = subprocess.run(cmd + ["--triton_impl_name", "triton_nope"], capture_output=True, text=True)
    assert missing.returncode == 2 and "not found" in missing.stderr


def test_cli_run_fills_the_unified_json(cli):
    clean = GELU / "gelu_triton_ascend_impl.py"
    degraded = GELU / "degraded" / "gelu_type3.py"
    run = cli(str(clean), str(degraded), "--run", "--backend", "cpu", "--seeds", "1", "--json",
              "--tolerance", "three_term", "--fresh-cache", timeout=600)
    assert run.rc == 1  # the degraded file's lint findings
    files = {f["path"]: f for f in run.json["files"]}
    rt = files[str(clean)]["runtime"]
    assert rt["verify"]["policy"] == "three_term" and "tritonlint-cache-" in rt["verify"]["environment"]["triton_cache_dir"]
    assert rt["reference"].endswith("gelu_torch.py")
    assert (rt["verify"]["total_cases"], rt["verify"]["passed_cases"]) == (1, 1)
    assert rt["benchmark"] is None and "no timing claims" in rt["benchmark_skipped"]
    assert files[str(degraded)]["runtime"] == {"skipped": "lint: the file is invalid, so the gate does not run it", "verdict": "skipped"}
    assert rt["verdict"] == "passed" and files[str(clean)]["valid"] is True
    alone = cli(str(clean), "--run", "--backend", "cpu", "--seeds", "1", timeout=600)
    assert alone.rc == 0
    assert f"{clean}: gate passed: 1/1 cases passed (mere_mare); correctness only, not timed" in alone.stdout


def test_cli_run_reports_a_failing_gate_and_missing_devices(cli, tmp_path):
    sub = tmp_path / "gelu_triton_ascend_impl.py"
    sub.write_text((GELU / "gelu_triton_ascend_impl.py").read_text().replace("0.5 * x", "0.25 * x"))
    shutil.copy(GELU / "gelu_torch.py", tmp_path / "gelu_torch.py")
    run = cli(str(sub), "--run", "--backend", "cpu", "--seeds", "1", "--json", timeout=600)
    assert run.rc == 1
    assert run.json["valid"] is False and run.json["files"][0]["valid"] is False  # the gate is part of the verdict
    assert run.json["summary"]["gate_failures"] == 1 and run.json["summary"]["invalid"] == 1
    rt = run.json["files"][0]["runtime"]
    assert rt["verdict"] == "incorrect" and rt["why"].startswith("0/1 cases passed (mere_mare); case 1: MismatchError")
    assert rt["reference"] == str(tmp_path / "gelu_torch.py")  # seed 002's naming, beside the file
    assert rt["verify"]["failures"][0]["error_type"] == "MismatchError"
    assert "verification failed" in rt["benchmark_skipped"]
    npu = cli(str(sub), "--run-npu")
    assert npu.rc == 2 and npu.stderr.strip() == "tritonlint: error: --run-npu: torch_npu is not installed"


def test_cli_run_text_never_says_all_checks_passed_for_a_failing_gate(cli, tmp_path):
    sub = tmp_path / "gelu_triton_ascend_impl.py"
    sub.write_text((GELU / "gelu_triton_ascend_impl.py").read_text().replace("0.5 * x", "0.25 * x"))
    shutil.copy(GELU / "gelu_torch.py", tmp_path / "gelu_torch.py")
    run = cli(str(sub), "--run", "--backend", "cpu", "--seeds", "1", timeout=600)
    assert run.rc == 1 and "All checks passed" not in run.stdout
    assert f"{sub}: gate incorrect: 0/1 cases passed (mere_mare); case 1: MismatchError" in run.stdout
    assert f"{sub}: invalid: runtime gate: incorrect" in run.stdout
    assert run.stdout.strip().endswith("1 of 1 file invalid (1 file checked).")


def test_cli_run_without_a_usable_reference_is_a_usage_error(cli, tmp_path):
    """No reference, a missing one, one that does not parse, lacks get_inputs, or raises: exit 2, one line."""
    sub = tmp_path / "gelu_triton_ascend_impl.py"
    shutil.copy(GELU / "gelu_triton_ascend_impl.py", sub)
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(sub, lone / "mykernel.py")

    def one_line_error(run, *needles):
        assert run.rc == 2, run.stdout + run.stderr
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("tritonlint: error: ") and "Traceback" not in run.stderr, run.stderr
        assert all(n in lines[0] for n in needles), lines[0]
        assert "All checks passed" not in run.stdout

    one_line_error(cli(str(lone / "mykernel.py"), "--run", "--backend", "cpu"), str(lone / "mykernel.py"), "no reference task found")
    one_line_error(cli(str(sub), "--run", "--backend", "cpu", "--reference", str(tmp_path / "nope.py")), "nope.py", "not found")
    broken = tmp_path / "broken_torch.py"
    broken.write_text("import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x)\n        return x\n")
    one_line_error(cli(str(sub), "--run", "--backend", "cpu", "--reference", str(broken)), f"{broken}:4:", "does not parse")
    partial = tmp_path / "partial_torch.py"
    partial.write_text("import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n")
    one_line_error(cli(str(sub), "--run", "--backend", "cpu", "--reference", str(partial)), str(partial), "get_inputs")
    raising = tmp_path / "raising_torch.py"
    raising.write_text((GELU / "gelu_torch.py").read_text() + "\nraise RuntimeError('the task file is broken')\n")
    one_line_error(cli(str(sub), "--run", "--backend", "cpu", "--seeds", "1", "--reference", str(raising), timeout=600),
                   str(raising), "RuntimeError", "the task file is broken")


def test_inputs_come_from_secret_seeds_the_candidate_never_sees():
    """A candidate that replays get_inputs() in __init__ (as it could when the gate seeded torch with
    the input seed before building it) fails: models are built from MODEL_SEED, inputs from seeds the
    OS draws per run, recorded in the result only after every child is done."""
    replay = run_verify(HOSTILE / "gelu_replays_inputs.py", seeds=2)
    assert only_errors(replay) == ["MismatchError", "MismatchError"]
    a = run_verify(GELU / "gelu_triton_ascend_impl.py", seeds=2)
    b = run_verify(GELU / "gelu_triton_ascend_impl.py", seeds=2)
    assert a["passed_cases"] == b["passed_cases"] == 2
    assert set(a["input_seeds"]) == {"1", "2"} and a["input_seeds"] != b["input_seeds"]


def test_cli_run_with_relative_paths(cli):
    """Children run in a private working folder: the paths the user typed must still reach them."""
    run = cli("cases/t1/gelu/gelu_triton_ascend_impl.py", "--run", "--backend", "cpu", "--seeds", "1", "--json", timeout=600)
    assert run.rc == 0, run.stderr
    assert run.json["files"][0]["runtime"]["verdict"] == "passed"


@requires_triton
def test_one_run_runs_each_task_s_reference_once_and_restores_its_inputs(tmp_path, monkeypatch):
    """The reference runs of a gate run are shared by its submissions of one task (same secret
    seeds, one reference child); a case file a candidate rewrote where it could (the sandbox's
    fallback) is written again from the parent's copy before the next submission reads it."""
    from tritonlint.runtime_check.backends import get_backend
    from tritonlint.runtime_check.reference import References
    from tritonlint.runtime_check.sandbox import NO_NAMESPACES
    from tritonlint.runtime_check.verify import verify

    monkeypatch.setenv(NO_NAMESPACES, "1")  # so the hostile rewrite goes through
    refs = References()
    try:
        run = lambda impl: verify(GELU / "gelu_torch.py", impl, get_backend("cpu"), seeds=2, references=refs)
        first = run(GELU / "gelu_triton_ascend_impl.py")
        hostile = run(HOSTILE / "gelu_rewrites_case_files.py")
        last = run(GELU / "gelu_triton_ascend_impl.py")
        folders = [r.folder for r in refs.runs.values()]
    finally:
        refs.close()
    assert (first["reference_reused"], hostile["reference_reused"], last["reference_reused"]) == (False, True, True)
    assert first["input_seeds"] == hostile["input_seeds"] == last["input_seeds"]
    assert first["phases_s"]["reference"] > last["phases_s"]["reference"]
    # each child's own timeline, in the order it got there; a reused reference has none
    assert list(first["child_phases_s"]["reference"]) == ["start", "load", "inputs1", "case1", "inputs2", "case2", "exit"]
    # the first candidate's child started beside the reference's and waited for its order; the last's did not
    assert list(first["child_phases_s"]["candidate"]) == ["start", "order", "load", "case1", "case2", "census", "exit"]
    assert list(last["child_phases_s"]["candidate"]) == ["start", "load", "case1", "case2", "census", "exit"]
    assert last["child_phases_s"]["reference"] == {}
    assert first["passed_cases"] == last["passed_cases"] == 2, last["failures"]  # the zeros it wrote were undone
    assert len(folders) == 1 and not folders[0].exists()  # closing the run removes its case files
