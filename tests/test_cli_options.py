"""The CLI's everyday options, through the real CLI: in a child process where the process matters (colour,
standard input, an unwritable output, the README's command), else `tritonlint.cli.main` in this one."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import EXAMPLES, cli_in_process, run_cli
from tritonlint.examples import LAUNCH, submission

DEGRADED = EXAMPLES / "sigmoid_scale_sum_degraded.py"


def test_exit_zero_quiet_statistics_version():
    assert cli_in_process(str(EXAMPLES), "--exit-zero").rc == 0
    clash = cli_in_process(str(EXAMPLES), "--exit-zero", "--fail-on", "warning")
    assert clash.rc == 2 and clash.stderr.startswith("tritonlint: error: --exit-zero and --fail-on")
    quiet = cli_in_process(str(EXAMPLES), "-q")
    assert quiet.rc == 1 and "Found" not in quiet.stdout and "TL003" in quiet.stdout
    stats = cli_in_process(str(EXAMPLES), "--statistics")
    assert stats.stdout.split() == ["1", "TL003", "torch-compute-in-forward"]
    version = run_cli("--version")  # a child process: the version prints before anything heavy is imported
    assert version.rc == 0 and version.stdout.startswith("tritonlint ")


def test_color_follows_flag_and_environment():
    plain = run_cli(str(DEGRADED), "--color", "never")
    forced = run_cli(str(DEGRADED), "--color", "always")
    assert "\x1b[" not in plain.stdout and "\x1b[" in forced.stdout
    env = {"PATH": "/usr/bin:/bin", "FORCE_COLOR": "1"}
    auto = subprocess.run([sys.executable, "-m", "tritonlint", str(DEGRADED)], capture_output=True, text=True, env=env)
    assert "\x1b[" in auto.stdout
    env["NO_COLOR"] = "1"
    env.pop("FORCE_COLOR")
    auto = subprocess.run([sys.executable, "-m", "tritonlint", str(DEGRADED)], capture_output=True, text=True, env=env)
    assert "\x1b[" not in auto.stdout


def test_standard_input_with_a_filename():
    src = DEGRADED.read_bytes()
    run = subprocess.run([sys.executable, "-m", "tritonlint", "-", "--stdin-filename", "impl.py"], input=src, capture_output=True)
    assert run.returncode == 1 and run.stdout.decode().startswith("impl.py:22:20: TL003")
    fix = subprocess.run([sys.executable, "-m", "tritonlint", "-", "--fix"], input=src, capture_output=True)
    assert fix.returncode == 2 and b"use --diff" in fix.stderr


def test_noqa_is_an_alias_of_the_ignore_comment(tmp_path):
    src = submission(LAUNCH.replace("return out", 'print("hi")  # noqa: TL304\nreturn out  # noqa: E501'))
    p = tmp_path / "s.py"
    p.write_text(src)
    run = cli_in_process(str(p), "--json")
    assert [d["code"] for d in run.json["files"][0]["diagnostics"]] == []  # E501 is another tool's; nothing unused
    p.write_text(submission(LAUNCH.replace("return out", "return out.sum()  # noqa: TL003")))
    codes = sorted(d["code"] for d in cli_in_process(str(p), "--json").json["files"][0]["diagnostics"])
    assert codes == ["TL003", "TL906"]  # a degradation finding stays, and the refusal is said


def test_output_file_folders_and_unwritable_output(tmp_path):
    target = tmp_path / "a" / "b" / "report.json"
    run = run_cli(str(EXAMPLES), "--json", "-o", str(target))
    assert run.rc == 1 and target.exists() and run.stdout == ""
    (tmp_path / "blocker").write_text("a file, not a folder")
    bad = run_cli(str(EXAMPLES), "-o", str(tmp_path / "blocker" / "r.txt"))
    assert bad.rc == 2 and bad.stderr.startswith(f"tritonlint: error: -o {tmp_path / 'blocker' / 'r.txt'}: cannot write") and "Traceback" not in bad.stderr


def test_explain_knows_engine_codes_and_fixable_counts_split(tmp_path):
    run = cli_in_process("explain", "TL907")
    assert run.rc == 0 and run.stdout.startswith("# TL907 fix-dropped (warning)")
    assert "TL900  syntax-error" in cli_in_process("rules").stdout
    src = submission(LAUNCH.replace("torch.empty_like(x)", "torch.zeros_like(x)").replace("return out", 'print("hi")\nreturn out'))
    p = tmp_path / "s.py"
    p.write_text(src)
    text = cli_in_process(str(p)).stdout
    assert "1 fixable with `--fix`, 1 more with `--unsafe-fixes` [*]." in text


def test_a_bad_baseline_is_one_usage_line():
    run = run_cli(str(EXAMPLES / "gelu_triton.py"), "--run", "--baseline", "jit")
    assert run.rc == 2 and run.stdout == ""
    last = run.stderr.strip().splitlines()[-1]  # argparse's usage, then one error line, as for every other choice
    assert last.startswith("tritonlint: error: argument --baseline: invalid choice: 'jit'") and "eager" in last


def test_every_cli_flag_is_in_the_readme():
    from conftest import ROOT
    from tritonlint.cli import _parser

    readme = (ROOT / "README.md").read_text()
    flags = [s for a in _parser()._actions for s in a.option_strings if s.startswith("--") and s != "--help"]
    missing = [f for f in flags if not re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", readme)]
    assert flags and missing == []


def test_readme_sample_output_is_what_the_command_prints():
    from conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    block = readme.split("$ tritonlint examples/\n", 1)[1].split("```", 1)[0]
    run = run_cli("examples/", cwd=ROOT)
    assert run.stdout == block
