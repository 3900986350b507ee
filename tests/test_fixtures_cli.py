"""The labelled fixture corpus, end to end through the real CLI."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES, SUBMISSIONS, cli_in_process, computed_once, run_cli
from tritonlint.registry import rule_by_code
from tritonlint.rule import expected_findings

FILES = sorted(SUBMISSIONS.glob("*.py")) + sorted(EXAMPLES.glob("*.py"))


def test_corpus_size():
    assert len(FILES) >= 60
    assert sum(f.name.startswith("clean_") for f in FILES) >= 20
    assert len(list(EXAMPLES.glob("*.py"))) == 2
    for t in (1, 2, 3, 4):
        assert any(f.name.startswith(f"type{t}_") for f in FILES)


@pytest.fixture(scope="module")
def corpus_report(tmp_path_factory):
    def lint() -> dict:
        run = run_cli("--json", "-j", "2", str(SUBMISSIONS), str(EXAMPLES))
        assert run.rc == 1
        return run.json

    return computed_once(tmp_path_factory, "corpus_report", lint)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_fixture_findings(corpus_report, path):
    entry = next(f for f in corpus_report["files"] if f["path"] == str(path))
    got = sorted((d["code"], d["line"]) for d in entry["diagnostics"])
    assert got == expected_findings(path.read_text())
    by_code = {d["code"]: d for d in entry["diagnostics"]}
    types = sorted({rule_by_code(c).regression_type for c in by_code if by_code[c]["category"] == "degradation"})
    assert entry["regression_type"] == (types[0] if types else None)
    assert entry["valid"] is not any(d["category"] in ("degradation", "integrity") for d in by_code.values())
    if types:
        assert entry["suggestion"]


def test_single_file_top_level_is_seed_002():
    path = SUBMISSIONS / "type3_01_softmax_after_kernel.py"
    run = cli_in_process(str(path), "--json")
    assert run.rc == 1
    r = run.json
    assert r["valid"] is False and r["regression_type"] == 3
    checks = r["checks"]
    assert checks["triton_kernel_exists"] == {"passed": True, "kernels": ["scale_kernel"]}
    assert checks["kernel_called_from_forward"] == {"passed": True, "called": ["scale_kernel"]}
    v = checks["no_forbidden_torch_ops"]
    assert v["passed"] is False
    assert v["violations"] == [{"line": 26, "call": "F.softmax", "reason": "torch.nn.functional.softmax computes in PyTorch"}]
    assert "Type 3" in r["suggestion"]
    assert r["files"][0]["runtime"] is None
    # seed 002's shape, plus our keys: the top level is unchanged, checks only gains keys
    assert set(r) == {"schema_version", "tool", "valid", "regression_type", "checks", "suggestion", "files", "summary"}
    assert set(checks) == {"triton_kernel_exists", "kernel_called_from_forward", "no_forbidden_torch_ops",
                           "kernel_not_placeholder", "no_forbidden_module_wide_ops", "no_dynamic_attr_evasion",
                           "no_host_math_fallback", "no_host_sync_risk", "no_measurement_gaming"}


def test_clean_file_exit_zero():
    run = cli_in_process(str(EXAMPLES / "gelu_triton.py"), "--json")
    assert run.rc == 0
    r = run.json
    assert r["valid"] is True and r["regression_type"] is None and r["suggestion"] is None
    assert all(c["passed"] for c in r["checks"].values())


def test_type1_checks_all_reported():
    r = cli_in_process(str(SUBMISSIONS / "type1_01_pure_torch.py"), "--json").json
    assert r["regression_type"] == 1
    assert r["checks"]["triton_kernel_exists"] == {"passed": False, "kernels": []}
    assert r["checks"]["kernel_called_from_forward"]["passed"] is False
    assert r["checks"]["no_forbidden_torch_ops"]["violations"][0]["call"] == "F.gelu"


def test_text_output_lines():
    run = cli_in_process(str(SUBMISSIONS / "type3_08_operators.py"))
    assert run.rc == 1
    lines = run.stdout.splitlines()
    assert any(":24:" in ln and "TL003" in ln and "`@`" in ln for ln in lines), lines
    assert lines[-1].startswith("Found 3 errors and 0 warnings in 1 file")
    assert "\x1b[" not in run.stdout  # no colour when not a TTY
