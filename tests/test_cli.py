"""CLI behaviour: selection, catalog commands, mixed repositories, output files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from conftest import ROOT, SUBMISSIONS, cli_in_process, validate_report

MIXED = SUBMISSIONS / "type4_03_cast_only_kernel.py"  # TL003 and TL004


def codes(run) -> list[str]:
    return [d["code"] for f in run.json["files"] for d in f["diagnostics"]]


def test_select_and_ignore():
    assert sorted(codes(cli_in_process(str(MIXED), "--json"))) == ["TL003", "TL004"]
    assert codes(cli_in_process(str(MIXED), "--json", "--select", "TL004")) == ["TL004"]
    run = cli_in_process(str(MIXED), "--json", "--ignore", "TL003,TL004")
    assert codes(run) == [] and run.rc == 0


def test_rules_and_explain(cli):
    run = cli("rules")
    assert run.rc == 0
    for code in ("TL001", "TL002", "TL003", "TL004"):
        assert code in run.stdout
    ex = cli("explain", "TL003")
    assert ex.rc == 0 and "## Why is this bad?" in ex.stdout and "```python" in ex.stdout
    assert cli("explain", "placeholder-kernel").rc == 0
    bad = cli("explain", "TL999")
    assert bad.rc == 2 and "no rule" in bad.stderr


def test_usage_errors_exit_2(cli):
    assert cli().rc == 2
    assert cli("--format", "xml", str(MIXED)).rc == 2
    assert cli("--no-such-flag", str(MIXED)).rc == 2


def test_mixed_repository_skips_unrelated_files(tmp_path):
    (tmp_path / "setup_helpers.py").write_text("import os\n\ndef version():\n    return os.environ.get('V', '0')\n")
    (tmp_path / "kernels.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(p):\n    tl.store(p, tl.load(p) + 1)\n"
    )
    shutil.copy(SUBMISSIONS / "clean_02_jit_with_args.py", tmp_path / "solution.py")
    run = cli_in_process(str(tmp_path), "--json")
    assert run.rc == 0
    status = {f["path"].rsplit("/", 1)[-1]: f["status"] for f in run.json["files"]}
    assert status == {"kernels.py": "ok", "setup_helpers.py": "skipped", "solution.py": "ok"}
    text = cli_in_process(str(tmp_path))
    assert text.stdout.strip().endswith("All checks passed (2 files checked, 1 skipped).")


def test_output_file_and_several_files_merge_checks(tmp_path):
    out = tmp_path / "report.json"
    a, b = SUBMISSIONS / "type1_01_pure_torch.py", SUBMISSIONS / "type3_07_tensor_methods.py"
    run = cli_in_process(str(a), str(b), "--format", "json", "-o", str(out))
    assert run.rc == 1 and run.stdout == ""
    r = validate_report(json.loads(out.read_text()))
    assert r["regression_type"] == 1 and r["valid"] is False
    assert "Type 1" in r["suggestion"]
    violations = r["checks"]["no_forbidden_torch_ops"]["violations"]
    assert {v["path"] for v in violations} == {str(a), str(b)}
    assert r["checks"]["triton_kernel_exists"]["passed"] is False


def test_exclude_glob(tmp_path):
    shutil.copy(SUBMISSIONS / "type1_01_pure_torch.py", tmp_path / "bad.py")
    shutil.copy(SUBMISSIONS / "clean_01_direct_launch.py", tmp_path / "good.py")
    assert cli_in_process(str(tmp_path), "--exclude", "bad.py").rc == 0
    assert cli_in_process(str(tmp_path)).rc == 1


def test_lint_path_imports_no_torch_triton_numpy(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tritonlint", "--json", str(MIXED)],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert proc.returncode == 1
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "libcst" in imported
    assert not imported & {"torch", "triton", "numpy", "torch_npu"}, imported & {"torch", "triton", "numpy"}


def test_rule_reference_is_generated_and_current():
    run = cli_in_process("rules", "--markdown")
    assert run.rc == 0
    assert (ROOT / "docs" / "rules.md").read_text() == run.stdout, "run: tritonlint rules --markdown > docs/rules.md"
    assert run.stdout.count("\n### TL") >= 19


def test_colour_only_on_a_tty():
    import os
    import pty

    master, slave = pty.openpty()
    proc = subprocess.run([sys.executable, "-m", "tritonlint", str(MIXED)], stdout=slave, stderr=subprocess.PIPE,
                          cwd=ROOT, env={k: v for k, v in os.environ.items() if k != "NO_COLOR"}, timeout=120)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    out = b"".join(chunks).decode()
    assert proc.returncode == 1
    assert "\x1b[" in out and "TL003" in out


def test_linting_never_imports_torch():
    """The lint path takes the gate's options from runtime_check/options.py, which imports no torch."""
    code = ("import sys; from tritonlint.cli import main; main(['" + str(MIXED) + "', '--json', '-j', '1', '-o', '/dev/null']); "
            "print('torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr
