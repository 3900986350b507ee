"""The Python API agents call: `tritonlint.check`, the same verdict as the CLI."""

from __future__ import annotations

import json

import tritonlint
from conftest import EXAMPLES, ROOT, requires_triton, run_cli, validate_report


def _without_times(report: dict) -> dict:
    report = json.loads(json.dumps(report))
    report["summary"].pop("elapsed_ms")
    return report


def test_check_matches_the_cli_json():
    for path in sorted(EXAMPLES.glob("*.py")):
        report = tritonlint.check(path.read_text(), path=str(path))
        cli = run_cli(str(path), "--json").json
        assert _without_times(validate_report(report.to_dict())) == _without_times(cli)
        assert report.valid is cli["valid"] and report.regression_type == cli["regression_type"]


def test_check_reports_typed_findings_and_never_imports_torch():
    import subprocess
    import sys

    src = (EXAMPLES / "sigmoid_scale_sum_degraded.py").read_text()
    report = tritonlint.check(src)
    assert not report.valid and report.regression_type == 3
    d = report.diagnostics[0]
    assert (d.code, d.line, d.category) == ("TL003", 22, "degradation")
    probe = "import sys, tritonlint; tritonlint.check(open(sys.argv[1]).read()); assert 'torch' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", probe, str(EXAMPLES / "gelu_triton.py")]).returncode == 0


@requires_triton
def test_gate_takes_the_baseline_like_any_gate_option():
    import pytest

    impl = str(ROOT / "cases" / "t1" / "gelu" / "gelu_triton_ascend_impl.py")
    with pytest.raises(ValueError, match="baseline must be one of eager, compile"):
        tritonlint.gate(impl, backend="cpu", baseline="jit")
    runtime = tritonlint.gate(impl, backend="cpu", seeds=1, baseline="compile").result.runtime
    assert runtime["verdict"] == "passed" and "no timing claims" in runtime["benchmark_skipped"]  # cpu: nothing timed
