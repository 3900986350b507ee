"""Suppression comments and [tool.tritonlint] config, through the real CLI."""

from __future__ import annotations

import shutil
import subprocess
import textwrap

from conftest import SUBMISSIONS, cli_in_process, run_cli

WARNS = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        print("hi")
        k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
        return out
"""


def codes(run) -> list[tuple[str, int]]:
    return sorted((d["code"], d["line"]) for f in run.json["files"] for d in f["diagnostics"])


def test_line_and_next_line_suppressions(tmp_path):
    src = WARNS.replace("tl.load(x_ptr + offs) + 1)", "tl.load(x_ptr + offs) + 1)  # tritonlint: ignore[TL203]")
    src = src.replace('        print("hi")', '        # tritonlint: ignore[TL304]\n        print("hi")')
    p = tmp_path / "s.py"
    p.write_text(src)
    run = cli_in_process(str(p), "--json")
    assert codes(run) == [] and run.rc == 0


def test_file_suppression_and_unused_warning(tmp_path):
    p = tmp_path / "s.py"
    p.write_text("# tritonlint: ignore-file[TL203, TL304]\n" + WARNS.replace("return out", "return out  # tritonlint: ignore[TL101]"))
    run = cli_in_process(str(p), "--json")
    assert codes(run) == [("TL905", 20)]
    assert run.rc == 0  # a warning alone does not fail the run...
    assert cli_in_process(str(p), "--fail-on", "warning").rc == 1  # ...unless asked to
    d = run.json["files"][0]["diagnostics"][0]
    assert d["severity"] == "warning" and "TL101" in d["message"]


def test_degradation_cannot_be_suppressed_by_the_file(tmp_path):
    src = (SUBMISSIONS / "type3_01_softmax_after_kernel.py").read_text()
    src = src.replace("# expect: TL003", "# tritonlint: ignore[TL003]")
    p = tmp_path / "s.py"
    p.write_text(src)
    run = cli_in_process(str(p), "--json")
    assert codes(run) == [("TL003", 26), ("TL906", 26)]
    assert run.json["regression_type"] == 3


def test_repository_config_can_ignore_per_file(tmp_path):
    sub = tmp_path / "solutions"
    sub.mkdir()
    shutil.copy(SUBMISSIONS / "type4_03_cast_only_kernel.py", sub / "cast.py")
    shutil.copy(SUBMISSIONS / "type3_01_softmax_after_kernel.py", sub / "softmax.py")
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""
        [tool.tritonlint]
        ignore = ["TL107"]
        allow-glue = ["torch.nn.functional.softmax"]

        [tool.tritonlint.per-file-ignores]
        "solutions/cast.py" = ["TL004"]
    """))
    run = cli_in_process("solutions", "--json", cwd=tmp_path)
    by_file = {f["path"].rsplit("/", 1)[-1]: [d["code"] for d in f["diagnostics"]] for f in run.json["files"]}
    assert by_file == {"cast.py": ["TL003"], "softmax.py": []}
    assert run.json["files"][0]["checks"]["kernel_not_placeholder"]["passed"] is True
    isolated = cli_in_process("solutions", "--json", "--isolated", cwd=tmp_path)
    assert "TL004" in [d["code"] for f in isolated.json["files"] for d in f["diagnostics"]]
    flags_win = cli_in_process("solutions", "--json", "--select", "TL004", cwd=tmp_path)
    assert [d["code"] for f in flags_win.json["files"] for d in f["diagnostics"]] == []


def test_entry_class_from_config(tmp_path):
    src = (SUBMISSIONS / "clean_01_direct_launch.py").read_text().replace("class ModelNew", "class Solution")
    (tmp_path / "sol.py").write_text(src)
    (tmp_path / "pyproject.toml").write_text('[tool.tritonlint]\nentry-class = "Solution"\n')
    run = cli_in_process("sol.py", "--json", cwd=tmp_path)
    assert run.rc == 0 and run.json["files"][0]["checks"]["kernel_called_from_forward"]["called"] == ["scale_kernel"]


def test_bad_config_is_a_clear_usage_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tritonlint]\nselect = "TL003"\nbogus = 1\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    run = run_cli("a.py", cwd=tmp_path)
    assert run.rc == 2 and "unknown key(s) bogus" in run.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.tritonlint]\nselect = "TL003"\n')
    run = run_cli("a.py", cwd=tmp_path)
    assert run.rc == 2 and "select must be a list of strings" in run.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.tritonlint\n')
    run = run_cli("a.py", cwd=tmp_path)
    assert run.rc == 2 and "pyproject.toml" in run.stderr


def test_each_file_takes_the_nearest_config_above_it(tmp_path):
    """Run from a parent folder (a monorepo): the project's [tool.tritonlint] still applies, and a
    pyproject.toml without the table on the way up does not hide it."""
    project = tmp_path / "repo" / "kernels"
    (project / "sub").mkdir(parents=True)
    (tmp_path / "repo" / "pyproject.toml").write_text('[tool.tritonlint]\nignore = ["TL304"]\n')
    (project / "pyproject.toml").write_text('[project]\nname = "kernels"\n')
    (project / "sub" / "s.py").write_text(WARNS)
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "s.py").write_text(WARNS)
    run = cli_in_process(str(tmp_path / "repo"), str(other), "--json", cwd=tmp_path)
    by_file = {f["path"]: sorted({d["code"] for d in f["diagnostics"]}) for f in run.json["files"]}
    assert "TL304" not in by_file[str(project / "sub" / "s.py")] and "TL304" in by_file[str(other / "s.py")]
    explicit = cli_in_process(str(other / "s.py"), "--json", "--config", str(tmp_path / "repo" / "pyproject.toml"), cwd=tmp_path)
    assert "TL304" not in {d["code"] for d in explicit.json["files"][0]["diagnostics"]}


def test_excludes_gitignore_and_force_exclude(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "pyproject.toml").write_text('[tool.tritonlint]\nexclude = ["generated/*"]\n')
    (tmp_path / ".gitignore").write_text("scratch.py\n")
    (tmp_path / "generated").mkdir()
    for name in ("keep.py", "scratch.py", "generated/gen.py"):
        (tmp_path / name).write_text(WARNS)
    walked = cli_in_process(".", "--json", cwd=tmp_path)
    assert sorted(f["path"] for f in walked.json["files"]) == ["./keep.py"]
    named = cli_in_process("generated/gen.py", "scratch.py", "--json", cwd=tmp_path)  # named files are linted as named...
    assert sorted(f["path"] for f in named.json["files"]) == ["generated/gen.py", "scratch.py"]
    forced = cli_in_process("generated/gen.py", "keep.py", "--json", "--force-exclude", cwd=tmp_path)  # ...unless forced
    assert [f["path"] for f in forced.json["files"]] == ["keep.py"]
    (tmp_path / ".gitignore").write_text("scratch.py\nvendored/\n")
    (tmp_path / "vendored").mkdir()
    (tmp_path / "vendored" / "lib.py").write_text(WARNS)
    assert [f["path"] for f in cli_in_process(".", "--json", cwd=tmp_path).json["files"]] == ["./keep.py"]
    named = cli_in_process("vendored", "--json", cwd=tmp_path)  # an ignored folder named on the command line is linted
    assert [f["path"] for f in named.json["files"]] == ["vendored/lib.py"]
